import ArgumentParser
import DiffEngine
@_exported import DiffEngineFiles
import Foundation

/// `diffbench diff OLD NEW --key COL[,COL…]`: a keyed diff of two CSV or JSON Lines files,
/// printed as the JSON changeset (see "The CLI" in the README).
public struct DiffCommand: ParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Diff two CSV or JSON Lines files by key columns and print the JSON changeset.",
        discussion: """
        Rows are in file order (0-based, the CSV header excluded). Identity is the tuple of \
        the key columns' values; content is the whole row. Bad input prints one line on \
        stderr and exits with status 2, with nothing on stdout.
        """
    )

    @Argument(help: "The old file (.csv, .jsonl or .ndjson).")
    var old: String

    @Argument(help: "The new file.")
    var new: String

    @Option(help: "Comma-separated key columns (CSV header names or top-level JSON members).")
    var key: String

    @Option(help: "csv or jsonl (default: from the file extension).")
    var format: String?

    @Option(help: "minimal, displaced or none.")
    var moves: String = "minimal"

    @Option(help: "pair (k-th occurrences pair), reject (a repeated key is an error) or first (later repeats are dropped).")
    var duplicates: String = "pair"

    @Flag(help: "Print counts and the first changed rows instead of JSON.")
    var summary = false

    public func run() throws {
        do throws(InputError) {
            try writeToStandardOutput(try execute())
        } catch {
            FileHandle.standardError.write(Data("diffbench: \(error)\n".utf8))
            throw ExitCode(2)
        }
    }

    /// Reads, diffs and renders; throws before anything is written.
    public func execute() throws(InputError) -> [UInt8] {
        let keys = parseList(key)
        guard !keys.isEmpty else { throw InputError(file: "--key", line: nil, message: "name at least one key column") }
        guard let moveMode = MoveMode(rawValue: moves) else {
            throw InputError(file: "--moves", line: nil, message: "expected minimal, displaced or none, not '\(moves)'")
        }
        let policies: [String: DuplicatePolicy] = ["pair": .pairInOrder, "reject": .reject, "first": .firstWins]
        guard let policy = policies[duplicates] else {
            throw InputError(file: "--duplicates", line: nil, message: "expected pair, reject or first, not '\(duplicates)'")
        }
        let fileFormat: FileFormat
        if let format {
            guard let chosen = FileFormat(rawValue: format) else {
                throw InputError(file: "--format", line: nil, message: "expected csv or jsonl, not '\(format)'")
            }
            fileFormat = chosen
        } else {
            guard let detected = FileFormat(path: old), FileFormat(path: new) == detected else {
                throw InputError(file: old, line: nil, message: "cannot tell the format from the extensions; use --format csv or --format jsonl")
            }
            fileFormat = detected
        }

        let oldRows: FileRows, newRows: FileRows, adapter: ByteRowAdapter
        switch fileFormat {
        case .csv:
            var (bytes, ranges) = try readFiles([old, new])
            try checkUTF8(bytes, ranges[0], file: old)
            try checkUTF8(bytes, ranges[1], file: new)
            let reader = CSVReader(keys: keys)
            oldRows = try reader.read(&bytes, ranges[0], file: old)
            newRows = try reader.read(&bytes, ranges[1], file: new)
            adapter = ByteRowAdapter(bytes: bytes)
        case .jsonl:
            let oldFile = try MappedFile(path: old), newFile = try MappedFile(path: new)
            var documents = JSONDocuments(keys: keys)
            documents.reserveCapacity(oldFile.bytes.count + newFile.bytes.count)
            let reader = JSONLinesReader()
            oldRows = try reader.read(oldFile, path: old, into: &documents)
            newRows = try reader.read(newFile, path: new, into: &documents)
            adapter = documents.adapter
        }

        let changes: Changeset
        do {
            changes = try diff(oldRows.rows, newRows.rows, using: adapter, options: DiffOptions(moves: moveMode, duplicates: policy))
        } catch {
            let rows = error.side == .old ? oldRows : newRows
            let key = readableKey(of: rows.rows[error.secondIndex], in: adapter.bytes, json: fileFormat == .jsonl,
                                  keyColumns: keys.count)
            throw InputError(file: rows.path, line: Int(rows.lines[error.secondIndex]),
                             message: "duplicate key \(key) (first at line \(rows.lines[error.firstIndex]))")
        }
        return summary
            ? Array(renderSummary(changes, oldRows: oldRows, newRows: newRows, adapter: adapter,
                                  json: fileFormat == .jsonl, keyColumns: keys.count).utf8)
            : JSONChangesetRenderer().render(changes)
    }
}

/// A row's key for people: its key fields' text (CSV) or values as JSON (JSON Lines).
func readableKey(of row: ByteRow, in bytes: [UInt8], json: Bool, keyColumns: Int) -> String {
    json ? ReadableKey.json(bytes[row.identity]) : ReadableKey.csv(bytes[row.identity], columns: keyColumns)
}

func renderSummary(_ changes: Changeset, oldRows: FileRows, newRows: FileRows, adapter: ByteRowAdapter,
                   json: Bool, keyColumns: Int) -> String {
    func key(_ row: ByteRow) -> String {
        let text = readableKey(of: row, in: adapter.bytes, json: json, keyColumns: keyColumns)
        return text.count > 60 ? String(text.prefix(57)) + "..." : text
    }
    // Under `first`, indexes refer to the rows left after dropping repeats.
    func kept(_ rows: FileRows, dropped: [Int]?) -> [Int] {
        guard let dropped else { return Array(rows.rows.indices) }
        let droppedSet = Set(dropped)
        return rows.rows.indices.filter { !droppedSet.contains($0) }
    }
    let oldKept = kept(oldRows, dropped: changes.droppedOld), newKept = kept(newRows, dropped: changes.droppedNew)
    let shown = 10
    var lines = [
        "old: \(oldRows.path), \(changes.oldCount) rows; new: \(newRows.path), \(changes.newCount) rows",
        "deletions \(changes.deletions.count), insertions \(changes.insertions.count), updates \(changes.updates.count), moves \(changes.moves.count)",
    ]
    if let droppedOld = changes.droppedOld, let droppedNew = changes.droppedNew {
        lines.append("dropped repeats: \(droppedOld.count) old, \(droppedNew.count) new")
    }
    func section(_ title: String, _ count: Int, _ describe: (Int) -> String) {
        guard count > 0 else { return }
        lines.append("\(title)\(count > shown ? " (first \(shown))" : ""):")
        for index in 0..<min(count, shown) { lines.append("  " + describe(index)) }
    }
    section("deleted", changes.deletions.count) { k in
        let row = changes.deletions[k]
        return "old row \(row) (line \(oldRows.lines[oldKept[row]])) key \(key(oldRows.rows[oldKept[row]]))"
    }
    section("inserted", changes.insertions.count) { k in
        let row = changes.insertions[k]
        return "new row \(row) (line \(newRows.lines[newKept[row]])) key \(key(newRows.rows[newKept[row]]))"
    }
    section("updated", changes.updates.count) { k in
        let pair = changes.updates[k]
        return "old row \(pair.old) -> new row \(pair.new) (line \(newRows.lines[newKept[pair.new]])) key \(key(newRows.rows[newKept[pair.new]]))"
    }
    section("moved", changes.moves.count) { k in
        let pair = changes.moves[k]
        return "old row \(pair.old) -> new row \(pair.new) key \(key(newRows.rows[newKept[pair.new]]))"
    }
    return lines.joined(separator: "\n") + "\n"
}
