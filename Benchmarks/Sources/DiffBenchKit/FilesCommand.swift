import ArgumentParser
import DiffEngine
import DiffEngineCommand
import DiffEngineTestSupport
import Foundation

/// `diffbench files`: generates two CSV files and two JSON Lines files of the same rows
/// (10% deleted, 10% inserted, 2% moved, 2% updated), times `diffengine OLD NEW --key id`
/// end to end in each output format, reports its peak memory against the inputs' size, and
/// checks its answer.
public struct FilesCommand: ParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "files",
        abstract: "Time `diffengine` end to end on generated CSV and JSON Lines files, with its peak memory, and verify its output."
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
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("diffengine").path
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw ValidationError("diffengine is not built beside diffbench: swift build -c release --package-path Benchmarks --product diffengine")
        }

        progress("files: generating \(rows) rows a file in \(folder)")
        let (old, new) = makeFileRows(count: rows)
        var failed = false
        var lines = ["input   output    rows      inputs MB  median s    min s    max s  peak MB  peak/inputs  verified"]
        for format in [TableFormat.csv, .jsonLines] {
            let name = format == .csv ? "csv" : "jsonl"
            let oldPath = "\(folder)/old.\(name)", newPath = "\(folder)/new.\(name)"
            try Data(render(old, format)).write(to: URL(fileURLWithPath: oldPath))
            try Data(render(new, format)).write(to: URL(fileURLWithPath: newPath))
            let inputBytes = try [oldPath, newPath].reduce(0) { $0 + ((try FileManager.default.attributesOfItem(atPath: $1)[.size] as? Int) ?? 0) }
            for output in ["indexes", "summary", "json"] {
                var times: [Double] = [], peaks: [Int] = []
                let outPath = "\(folder)/out.\(output)"
                for run in 0..<runs {
                    progress("files: \(name) --format \(output) run \(run + 1) of \(runs)")
                    let measured = try spawnMeasured(executable, [oldPath, newPath, "--key", "id", "--format", output], stdout: outPath)
                    guard measured.status == 1 else {
                        throw ValidationError("diffengine exited with \(measured.status) on \(name) files (expected 1: they differ)")
                    }
                    times.append(measured.seconds)
                    peaks.append(measured.peakBytes)
                }
                let problems = output == "indexes" ? verify(try Data(contentsOf: URL(fileURLWithPath: outPath)), old: old, new: new) : []
                failed = failed || !problems.isEmpty
                times.sort()
                let peak = peaks.max()!
                let verdict = output != "indexes" ? "-" : problems.isEmpty ? "ok" : "FAIL: \(problems.prefix(2).joined(separator: "; "))"
                lines.append(name.padding(toLength: 8, withPad: " ", startingAt: 0)
                             + output.padding(toLength: 10, withPad: " ", startingAt: 0)
                             + String(rows).padding(toLength: 10, withPad: " ", startingAt: 0)
                             + String(format: "%9.1f %9.3f %8.3f %8.3f %8.1f %12.2f  ", Double(inputBytes) / 1e6, median(times),
                                      times.first!, times.last!, Double(peak) / 1e6, Double(peak) / Double(inputBytes)) + verdict)
            }
        }
        print(lines.joined(separator: "\n"))
        if failed { throw ExitCode(1) }
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

/// Runs a program with its standard output in `stdout`; returns its exit status, wall time
/// and peak resident memory: its `VmHWM`, read every 2 ms while it runs (not `wait4`'s
/// `ru_maxrss`, which counts this process's memory too, shared until the child's exec).
func spawnMeasured(_ executable: String, _ arguments: [String], stdout: String) throws -> (status: Int32, seconds: Double, peakBytes: Int) {
    var actions: posix_spawn_file_actions_t = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let start = ContinuousClock.now
    let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
    guard spawned == 0 else { throw ValidationError("cannot run \(executable): \(String(cString: strerror(spawned)))") }
    var status: Int32 = 0
    var peak = 0
    while true {
        let done = waitpid(pid, &status, WNOHANG)
        if done == pid { break }
        if done < 0 && errno != EINTR { break }
        if let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
           let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
           let kilobytes = Int(line.split(separator: " ").dropFirst().first(where: { !$0.isEmpty }) ?? "") {
            peak = max(peak, kilobytes * 1024)
        }
        usleep(2_000)
    }
    let seconds = milliseconds(ContinuousClock.now - start) / 1000
    let exitStatus = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    return (exitStatus, seconds, peak)
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

func render(_ rows: [FileRow], _ format: TableFormat) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(rows.count * 128)
    func csvField(_ text: String) -> String {
        text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" }) ? "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : text
    }
    func jsonString(_ text: String) -> String { "\"" + text.replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
    switch format {
    case .delimited:
        out.append(contentsOf: "id,name,email,city,amount,note\n".utf8)
        for row in rows {
            out.append(contentsOf: "\(row.id),\(csvField(row.name)),\(row.email),\(csvField(row.city)),\(row.amount),\(csvField(row.note))\n".utf8)
        }
    case .jsonLines:
        for row in rows {
            out.append(contentsOf: "{\"id\":\(row.id),\"name\":\(jsonString(row.name)),\"email\":\(jsonString(row.email)),\"city\":\(jsonString(row.city)),\"amount\":\(row.amount),\"note\":\(jsonString(row.note))}\n".utf8)
        }
    }
    return out
}
