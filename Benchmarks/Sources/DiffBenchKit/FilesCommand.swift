import ArgumentParser
import DiffEngine
import DiffEngineTestSupport
import Foundation

/// `diffbench files`: generates two CSV files and two JSON Lines files of the same rows
/// (10% deleted, 10% inserted, 2% moved, 2% updated), times the whole
/// `diffbench diff OLD NEW --key id` command on each pair, and checks its output.
public struct FilesCommand: ParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "files",
        abstract: "Time `diffbench diff` end to end on generated CSV and JSON Lines files, and verify its output."
    )

    @Option(help: "Rows per file.")
    var rows = 1_000_000

    @Option(help: "Timed runs of each command.")
    var runs = 3

    @Option(help: "Where to write the files (default: a new temporary folder, removed afterwards).")
    var directory: String?

    public func validate() throws {
        if rows < 1 { throw ValidationError("--rows must be at least 1") }
        if runs < 1 { throw ValidationError("--runs must be at least 1") }
    }

    public func run() throws {
        let folder = directory ?? NSTemporaryDirectory() + "diffbench-files-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { if directory == nil { try? FileManager.default.removeItem(atPath: folder) } }

        progress("files: generating \(rows) rows a file in \(folder)")
        let (old, new) = makeFileRows(count: rows)
        var failed = false
        var lines = ["format  rows       file MB   median s     min s     max s  verified"]
        for format in FileFormat.allCases {
            let oldPath = "\(folder)/old.\(format.rawValue)", newPath = "\(folder)/new.\(format.rawValue)"
            try Data(render(old, format)).write(to: URL(fileURLWithPath: oldPath))
            try Data(render(new, format)).write(to: URL(fileURLWithPath: newPath))
            let megabytes = Double((try FileManager.default.attributesOfItem(atPath: oldPath)[.size] as? Int) ?? 0) / 1e6
            var times: [Double] = []
            var output = Data()
            for run in 0..<runs {
                progress("files: \(format.rawValue) run \(run + 1) of \(runs)")
                let (seconds, stdout, status) = try runDiff(oldPath, newPath)
                guard status == 0 else {
                    throw ValidationError("diffbench diff exited with \(status) on \(format.rawValue) files")
                }
                times.append(seconds)
                output = stdout
            }
            let problems = verify(output, old: old, new: new)
            failed = failed || !problems.isEmpty
            times.sort()
            let verdict = problems.isEmpty ? "ok" : "FAIL: \(problems.prefix(2).joined(separator: "; "))"
            lines.append(format.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)
                         + String(rows).padding(toLength: 10, withPad: " ", startingAt: 0)
                         + String(format: "%8.1f %10.3f %9.3f %9.3f  ", megabytes, median(times), times.first!, times.last!) + verdict)
        }
        print(lines.joined(separator: "\n"))
        if failed { throw ExitCode(1) }
    }

    /// Runs this executable's `diff` subcommand and returns its wall time, stdout and status.
    func runDiff(_ old: String, _ new: String) throws -> (Double, Data, Int32) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["diff", old, new, "--key", "id"]
        let pipe = Pipe()
        process.standardOutput = pipe
        let start = ContinuousClock.now
        try process.run()
        let stdout = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let seconds = milliseconds(ContinuousClock.now - start) / 1000
        return (seconds, stdout, process.terminationStatus)
    }

    func verify(_ output: Data, old: [FileRow], new: [FileRow]) -> [String] {
        guard let changes = try? JSONDecoder().decode(Changeset.self, from: output) else {
            return ["the output is not a JSON changeset"]
        }
        let application = checkApplication(changes, old: old, new: new, sameIdentity: { $0.id == $1.id }, sameContent: ==)
        guard application.problems.isEmpty else { return application.problems }
        return checkPairing(changes, implied: application.implied, mode: .minimal,
                            reference: indexedReferenceDiff(old, new, identity: \.id, sameContent: ==))
    }
}

/// A row of the generated files: about 100 bytes of CSV, some fields needing quotes.
struct FileRow: Hashable {
    var id: Int
    var name: String
    var email: String
    var city: String
    var amount: Int
    var note: String
}

func makeFileRows(count: Int) -> (old: [FileRow], new: [FileRow]) {
    var generator = SeededGenerator(seed: 0xF11E5)
    let cities = ["Lisbon", "Oslo", "São Paulo", "Kyoto", "Nairobi", "Zürich", "Austin", "Hanoi"]
    func fresh(_ generator: inout SeededGenerator) -> FileRow {
        let id = Int.random(in: 0..<1_000_000_000_000, using: &generator)
        let name = "user \(Int.random(in: 0..<1_000_000, using: &generator))"
        let note = Int.random(in: 0..<20, using: &generator) == 0 ? "said \"hi\", then left" : "regular customer since \(1990 + id % 35)"
        return FileRow(id: id, name: name, email: "u\(id)@example.com", city: cities[id % cities.count],
                       amount: Int.random(in: 0..<100_000, using: &generator), note: note)
    }
    let old = (0..<count).map { _ in fresh(&generator) }
    let new = perturb(old, ChangeRates(), using: &generator, update: { row in
        var changed = row
        changed.amount += 1
        return changed
    }, fresh: fresh)
    return (old, new)
}

func render(_ rows: [FileRow], _ format: FileFormat) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(rows.count * 128)
    func csvField(_ text: String) -> String {
        text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" }) ? "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : text
    }
    func jsonString(_ text: String) -> String { "\"" + text.replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
    switch format {
    case .csv:
        out.append(contentsOf: "id,name,email,city,amount,note\n".utf8)
        for row in rows {
            out.append(contentsOf: "\(row.id),\(csvField(row.name)),\(row.email),\(csvField(row.city)),\(row.amount),\(csvField(row.note))\n".utf8)
        }
    case .jsonl:
        for row in rows {
            out.append(contentsOf: "{\"id\":\(row.id),\"name\":\(jsonString(row.name)),\"email\":\(jsonString(row.email)),\"city\":\(jsonString(row.city)),\"amount\":\(row.amount),\"note\":\(jsonString(row.note))}\n".utf8)
        }
    }
    return out
}
