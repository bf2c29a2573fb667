import ArgumentParser
import CMallocCounter
import DiffEngine
import Foundation

/// The built-in workload: every scenario × engine, verified, then timed side by side.
public struct RunCommand: ParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Time every engine on the seeded scenarios, after checking each answer against the rules of the Correctness article."
    )

    @Option(help: "Comma-separated scenario names or prefixes (default: all). Names: \((allScenarios.map(\.name) + allStreams.map(\.name) + hostileCases.map(\.name)).joined(separator: ", ")); by exact name only: \(optInScenarios.map(\.name).joined(separator: ", ")).")
    var scenario: String?

    @Option(help: "Comma-separated row counts: only scenarios of these sizes (e.g. 5000).")
    var size: String?

    @Option(help: "Timed runs per engine (default: 101 up to 10,000 rows, 31 up to 200,000, 11 above; for a Differ stream, timed updates, by default one pass over its snapshots, more passes each with a fresh engine).")
    var runs: Int?

    @Option(help: "Comma-separated engines (default: all). Names: \(engineNames.joined(separator: ", ")).")
    var engines: String?

    @Option(help: "Also write the measurements as JSON to this file.")
    var json: String?

    @Flag(help: "Cold calls: before each timed run, touch a 64 MiB buffer (larger than the last-level cache) so that the diff starts with cold caches, as an app's occasional diff does.")
    var cold = false

    public func validate() throws {
        if let runs, runs < 1 { throw ValidationError("--runs must be at least 1") }
        if let size, parseList(size).contains(where: { Int($0) == nil }) {
            throw ValidationError("--size takes whole numbers, like 5000,100000")
        }
        if let engines, let unknown = parseList(engines).first(where: { !engineNames.contains($0) }) {
            throw ValidationError("unknown engine '\(unknown)'; engines: \(engineNames.joined(separator: ", "))")
        }
        if selectedScenarios().isEmpty && selectedStreams().isEmpty && selectedHostile().isEmpty {
            throw ValidationError("no scenario matches --scenario and --size")
        }
    }

    func selectedScenarios() -> [Scenario] {
        let names = scenario.map(parseList)
        let sizes = size.map { parseList($0).compactMap { Int($0) } }
        return allScenarios.filter { candidate in
            (names?.contains { candidate.name.hasPrefix($0) } ?? true) && (sizes?.contains(candidate.size) ?? true)
        } + optInScenarios.filter { names?.contains($0.name) ?? false }
    }

    func selectedStreams() -> [SnapshotStream] {
        let names = scenario.map(parseList)
        let sizes = size.map { parseList($0).compactMap { Int($0) } }
        return allStreams.filter { stream in
            (names?.contains { stream.name.hasPrefix($0) } ?? true) && (sizes?.contains(stream.rows) ?? true)
        }
    }

    /// The hostile group runs at its own sizes: selected by name, or in a run without --size.
    func selectedHostile() -> [HostileCase] {
        let names = scenario.map(parseList)
        if names == nil && size != nil { return [] }
        return hostileCases.filter { hostile in names?.contains { hostile.name.hasPrefix($0) } ?? true }
    }

    public func run() throws {
        mc_start_counting()
        let wanted = engines.map(parseList)
        var measurements: [Measurement] = []
        for scenario in selectedScenarios() {
            progress("\(scenario.name): generating (\(scenario.summary))")
            let workload = scenario.make()
            let (cases, verifier) = engineCases(for: workload, editDistance: scenario.editDistance)
            let counts = workload.counts
            let runCount = runs ?? (scenario.size <= 10_000 ? 101 : scenario.size <= 200_000 ? 31 : 11)
            var results: [Measurement] = []
            for engine in cases where wanted?.contains(engine.name.rawValue) ?? true {
                var measurement = Measurement(scenario: scenario.name, engine: engine.name.rawValue, status: .ok)
                if let reason = engine.skipReason {
                    measurement.status = .skipped(reason)
                    results.append(measurement)
                    continue
                }
                progress("\(scenario.name): \(engine.name.rawValue): checking")
                let problems = engine.check(engine.run(), with: verifier)
                if !problems.isEmpty {
                    measurement.status = .failed(problems)
                    results.append(measurement)
                    continue
                }
                let engineRuns = engine.name == .reference || engine.name == .collectionDifference ? Swift.min(runCount, 11) : runCount
                progress("\(scenario.name): \(engine.name.rawValue): timing \(engineRuns) runs")
                var eviction: (() -> Void)?
                if cold { eviction = { evictCaches() } }
                let times = time(runs: engineRuns, warmup: engineRuns > 5 ? 2 : 1, beforeEach: eviction) { engine.run() as Any }
                measurement.runs = engineRuns
                measurement.medianMilliseconds = median(times)
                measurement.minMilliseconds = times.first
                measurement.maxMilliseconds = times.last
                if let heap = heapUse(engine.run) {
                    measurement.peakBytesPerRow = Double(heap.peak) / Double(Swift.max(counts.old + counts.new, 1))
                    measurement.allocations = Int(heap.allocations)
                }
                results.append(measurement)
            }
            let peer = results.first { $0.engine == EngineName.collectionDifference.rawValue }?.medianMilliseconds
            let floor = results.first { $0.engine == EngineName.flat.rawValue }?.medianMilliseconds
            for index in results.indices {
                guard let time = results[index].medianMilliseconds else { continue }
                results[index].ratioToCollectionDifference = peer.map { time / $0 }
                results[index].ratioToFlat = floor.map { time / $0 }
            }
            measurements += results
        }
        for stream in selectedStreams() {
            progress("\(stream.name): generating (\(stream.summary))")
            var results = stream.records
                ? measureStream(stream, snapshots: stream.makeRecords(), engines: recordStreamEngines, wanted: wanted, updates: runs)
                : measureStream(stream, snapshots: stream.make(), engines: streamEngines, wanted: wanted, updates: runs)
            // Ratios to the one-shot diff of the same snapshots with the same adapter (key paths
            // or `Identifiable`), measured in the same run.
            func oneShot(_ engine: EngineName) -> Double? {
                results.first { $0.engine == engine.rawValue }?.medianMilliseconds
            }
            for index in results.indices {
                let base = results[index].engine.contains("keypath") ? oneShot(.oneshotKeypath) : oneShot(.oneshotIdentifiable)
                results[index].ratioToFlat = base.flatMap { base in results[index].medianMilliseconds.map { $0 / base } }
            }
            measurements += results
        }
        let hostile = measureHostile(selectedHostile(), runs: runs)
        measurements += hostile
        print(renderTable(measurements.filter { $0.ratioToRandomTwin == nil && !$0.scenario.hasPrefix("hostile-") }))
        if !hostile.isEmpty { print("\n" + renderHostileTable(hostile)) }
        if let json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(measurements).write(to: URL(fileURLWithPath: json))
        }
        if measurements.contains(where: { if case .failed = $0.status { true } else { false } }) {
            throw ExitCode(1)
        }
    }
}

func parseList(_ text: String) -> [String] {
    text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
}

func progress(_ message: String) {
    FileHandle.standardError.write(Data("diffbench: \(message)\n".utf8))
}

func renderTable(_ measurements: [Measurement]) -> String {
    func format(_ value: Double?, _ digits: Int) -> String {
        value.map { String(format: "%.\(digits)f", $0) } ?? "-"
    }
    // As wide as the longest scenario name, so that none is cut.
    let width = measurements.map(\.scenario.count).max().map { Swift.max($0, 16) } ?? 16
    var lines = [
        "scenario".padding(toLength: width, withPad: " ", startingAt: 0)
            + " engine                   median ms      min ms      max ms  ×CollDiff   ×flat   B/row  allocs",
    ]
    for m in measurements {
        let name = m.scenario.padding(toLength: width, withPad: " ", startingAt: 0)
        let engine = m.engine.padding(toLength: 22, withPad: " ", startingAt: 0)
        guard m.status == .ok else {
            lines.append("\(name) \(engine) \(m.status)")
            continue
        }
        let columns = [
            format(m.medianMilliseconds, 4).leftPad(11), format(m.minMilliseconds, 4).leftPad(11),
            format(m.maxMilliseconds, 4).leftPad(11), format(m.ratioToCollectionDifference, 3).leftPad(10),
            format(m.ratioToFlat, 2).leftPad(7), format(m.peakBytesPerRow, 1).leftPad(7),
            (m.allocations.map(String.init) ?? "-").leftPad(7),
        ]
        lines.append("\(name) \(engine)" + columns.joined(separator: " "))
    }
    return lines.joined(separator: "\n")
}

extension String {
    func leftPad(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
