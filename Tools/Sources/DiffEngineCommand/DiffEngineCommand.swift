import ArgumentParser
import DiffEngine
@_exported import DiffEngineFiles
import Foundation

/// The version `diffengine --version` prints: the library's release (CHANGELOG.md).
public let diffEngineVersion = "0.1.0"

/// `diffengine OLD NEW --key COL[,COL…]`: the keyed diff of two tables (CSV, TSV or JSON
/// Lines). Exit status as `diff`: 0 no differences, 1 differences, 2 trouble.
public struct DiffEngineCommand: ParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "diffengine",
        abstract: "Diff two tables (CSV, TSV or JSON Lines) by key: deleted, inserted, updated and moved rows, and column changes.",
        discussion: """
        A CSV or TSV file's header is its schema: columns are matched by name, whatever their \
        order. Rows pair by the key columns' values (the k-th row with a key pairs with the \
        k-th row with that key on the other side); a paired row is updated when a compared \
        value differs. JSON Lines rows are objects compared by value (member order and \
        number spelling do not matter). Use - for standard input; pipes and process \
        substitution work.

        Row order: by default the files are ordered lists. --moves minimal reports the fewest \
        rows that must move to turn the old order into the new one; displaced reports every \
        kept row whose position among the kept rows changed; none reports no moves (a row \
        that moved is then a deletion and an insertion). --ignore-order treats both files as \
        sets of keyed rows: no moves, and no row is deleted or inserted for being elsewhere.

        Exit status: 0 no differences, 1 differences, 2 trouble (one line on stderr, nothing \
        on stdout).
        """,
        version: diffEngineVersion
    )

    @Argument(help: "The old file (.csv, .tsv, .jsonl or .ndjson; - for standard input).")
    var old: String

    @Argument(help: "The new file.")
    var new: String

    @Option(name: [.short, .long], help: "Comma-separated key columns (CSV/TSV header names or top-level JSON members).")
    var key: String

    @Option(help: ArgumentHelp("Output: summary, json, jsonl, indexes or patch (JSON Patch, JSON Lines only). csv or tsv here name the input format.", valueName: "format"))
    var format: String = "summary"

    @Option(help: "Input format when the names do not tell: csv, tsv or jsonl.")
    var input: String?

    @Option(help: "Field delimiter of delimited input: one character, or 'tab'.")
    var delimiter: String?

    @Option(help: "minimal, displaced or none (see above).")
    var moves: String = "minimal"

    @Flag(help: "Treat the files as sets of keyed rows: no moves.")
    var ignoreOrder = false

    @Option(help: "pair (the k-th occurrences of a key pair), reject (a repeated key is an error) or first (later repeats are dropped).")
    var duplicates: String = "pair"

    @Option(parsing: .singleValue, help: ArgumentHelp("A renamed column: OLD=NEW (repeatable).", valueName: "old=new"))
    var rename: [String] = []

    @Option(parsing: .singleValue, help: ArgumentHelp("Leave columns out of the comparison (comma-separated, repeatable).", valueName: "columns"))
    var ignore: [String] = []

    @Option(help: ArgumentHelp("Compare only these columns (comma-separated).", valueName: "columns"))
    var only: String?

    @Flag(help: "Count added and removed columns as changed values, so that every row is updated when a column comes or goes.")
    var columnChangesUpdateRows = false

    @Option(help: ArgumentHelp("Diff only the rows whose key hash falls in partition I of N (0-based), for N processes over one pair of files; implies --ignore-order.", valueName: "I/N"))
    var partition: String?

    @Flag(help: "json and jsonl: also list the paired rows whose compared values are equal, as \"unchanged\".")
    var unchanged = false

    @Flag(help: "json and jsonl: updated and unchanged entries carry both rows whole, as oldValues and newValues.")
    var wholeRows = false

    @Option(help: "How many of each kind of change --format summary lists.")
    var limit = 10

    public func run() throws {
        let differs: Bool
        do throws(InputError) {
            var out = OutputSink(toMemory: false)
            differs = try execute(into: &out).hasDifferences
            try out.flush()
        } catch {
            FileHandle.standardError.write(Data("diffengine: \(error)\n".utf8))
            throw ExitCode(2)
        }
        if differs { throw ExitCode(1) }
    }

    /// Runs the command into memory: the output and whether the files differ.
    public func output() throws(InputError) -> (bytes: [UInt8], differs: Bool) {
        let (bytes, diff) = try outputAndDiff()
        return (bytes, diff.hasDifferences)
    }

    /// Runs the command into memory: the output, and the diff it renders (both files' rows
    /// as read, and the changeset), for a caller that checks the reading too.
    public func outputAndDiff() throws(InputError) -> (bytes: [UInt8], diff: TableDiff) {
        var out = OutputSink(toMemory: true)
        let diff = try execute(into: &out)
        return (out.bytes, diff)
    }

    /// Runs the command, writing its output to `out`; returns the diff it rendered.
    func execute(into out: inout OutputSink) throws(InputError) -> TableDiff {
        var request = TableDiffRequest(oldPath: old, newPath: new, keys: parseList(key))
        var output = format, inputName = input
        if format == "csv" || format == "tsv" { // an input format given to --format
            output = "summary"
            inputName = inputName ?? format
        }
        if let inputName {
            switch inputName {
            case "csv": request.format = .csv
            case "tsv": request.format = .tsv
            case "jsonl", "ndjson": request.format = .jsonLines
            default: throw InputError(file: "--input", line: nil, message: "expected csv, tsv or jsonl, not '\(inputName)'")
            }
        }
        guard ["summary", "json", "jsonl", "indexes", "patch"].contains(output) else {
            throw InputError(file: "--format", line: nil, message: "expected summary, json, jsonl, indexes or patch (or csv/tsv for the input), not '\(format)'")
        }
        if let delimiter {
            let bytes = delimiter == "tab" || delimiter == "\\t" ? [UInt8(0x09)] : Array(delimiter.utf8)
            guard bytes.count == 1, bytes[0] != UInt8(ascii: "\""), bytes[0] != 0x0A, bytes[0] != 0x0D else {
                throw InputError(file: "--delimiter", line: nil, message: "expected one character other than a quote or a line break, or 'tab'")
            }
            request.delimiter = bytes[0]
        }
        guard let moveMode = MoveMode(rawValue: moves) else {
            throw InputError(file: "--moves", line: nil, message: "expected minimal, displaced or none, not '\(moves)'")
        }
        request.moves = moveMode
        let policies: [String: DuplicatePolicy] = ["pair": .pairInOrder, "reject": .reject, "first": .firstWins]
        guard let policy = policies[duplicates] else {
            throw InputError(file: "--duplicates", line: nil, message: "expected pair, reject or first, not '\(duplicates)'")
        }
        request.duplicates = policy
        request.ignoreOrder = ignoreOrder
        for pair in rename {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw InputError(file: "--rename", line: nil, message: "expected OLD=NEW, not '\(pair)'")
            }
            request.renames.append((parts[0], parts[1]))
        }
        request.ignore = ignore.flatMap(parseList)
        request.only = only.map(parseList)
        request.columnChangesAreUpdates = columnChangesUpdateRows
        if let partition {
            let parts = partition.split(separator: "/").map { Int($0) }
            guard parts.count == 2, let index = parts[0], let count = parts[1], count >= 1, index >= 0, index < count else {
                throw InputError(file: "--partition", line: nil, message: "expected I/N with 0 <= I < N, not '\(partition)'")
            }
            request.partition = (index, count)
        }
        if output == "patch" {
            if request.ignoreOrder || request.partition != nil || policy == .firstWins || request.only != nil || !request.ignore.isEmpty {
                throw InputError(file: "--format patch", line: nil, message: "a patch rebuilds the whole new file: it cannot be combined with --ignore-order, --partition, --duplicates first, --only or --ignore")
            }
        }
        if (unchanged || wholeRows) && output != "json" && output != "jsonl" {
            throw InputError(file: unchanged ? "--unchanged" : "--whole-rows", line: nil, message: "lists rows in --format json or jsonl only")
        }
        request.showProgress = true
        guard limit >= 0 else { throw InputError(file: "--limit", line: nil, message: "expected a count of 0 or more") }

        let diff = try TableDiff.run(request)
        if output == "patch" && diff.oldFormat != .jsonLines {
            throw InputError(file: "--format patch", line: nil, message: "JSON Patch needs JSON Lines input")
        }
        var renderer = KeyedRenderer(diff: diff, keys: request.keys, only: request.only, ignore: request.ignore)
        renderer.listUnchanged = unchanged
        renderer.wholeRows = wholeRows
        switch output {
        case "json": try renderer.renderJSON(to: &out)
        case "jsonl": try renderer.renderJSONLines(to: &out)
        case "indexes": renderer.renderIndexes(to: &out)
        case "patch": try renderer.renderPatch(to: &out)
        default: try renderer.renderSummary(limit: limit, to: &out)
        }
        return diff
    }
}

extension ParsableCommand {
    /// Runs the command as a program: exit status 0 or what the command threw (`ExitCode`),
    /// and usage mistakes exit 2 with one line on stderr, like unreadable input.
    public static func runAsProgram(name: String, arguments: [String]? = nil) -> Never {
        do {
            var command = try parseAsRoot(arguments)
            try command.run()
            Foundation.exit(0)
        } catch let code as ExitCode {
            Foundation.exit(code.rawValue) // the command already said why
        } catch {
            let code = exitCode(for: error)
            if code == .success { exit(withError: error) } // --help, --version
            var message = fullMessage(for: error).split(separator: "\n").first.map(String.init) ?? "invalid arguments"
            if message.hasPrefix("Error: ") { message.removeFirst("Error: ".count) }
            FileHandle.standardError.write(Data("\(name): \(message)\n".utf8))
            Foundation.exit(2)
        }
    }
}

/// Splits a comma-separated list, dropping empty items.
func parseList(_ text: String) -> [String] {
    text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
}
