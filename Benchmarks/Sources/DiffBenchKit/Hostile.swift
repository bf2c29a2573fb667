import DiffEngine
import DiffEngineCommand
import DiffEngineTestSupport
import Dispatch
import Foundation

/// One attack of the `hostile` group: an input crafted against the engine's public seed
/// and code, and its random twin of the same size and shape. Both answers are checked;
/// the crafted input's median over the twin's is the figure (target: at most 2).
struct HostileCase: Sendable {
    var name: String
    var summary: String
    /// Builds the inputs: the work for the crafted input and for its random twin.
    var make: @Sendable () -> (crafted: HostileWorkload, random: HostileWorkload)
    var runs: Int
}

/// The timed work on one input, and a check of its answer (problems; empty when right).
struct HostileWorkload {
    var run: () -> Any
    var check: () -> [String]
}

/// A row keyed by bytes, as ids from a client are.
struct ByteIDRow: Identifiable, Hashable {
    var id: [UInt8]
    var value: Int
}

/// Exact integer ids that all land in home slot 0 of an unkeyed Fibonacci table
/// (id × 0x9e3779b97f4a7c15 has all-zero high bits): what the identity table placed by
/// before its placement was keyed with a per-process secret.
func fibonacciSlotZeroID(_ index: Int) -> Int {
    Int(bitPattern: UInt(UInt64(index) &* 0xf1de_83e1_9937_733d)) // 0x9e3779b97f4a7c15⁻¹ mod 2^64
}

/// 32-byte ids sharing one XXH3-64 under the public seed: bytes 0-7 zero XXH3's first
/// 16-byte multiply, so bytes 8-15 (here the index) stop mattering.
func xxh3CollidingID(_ index: Int) -> [UInt8] {
    var bytes = [UInt8](repeating: 0x2a, count: 32)
    withUnsafeBytes(of: (UInt64(0xbe4b_a423_396c_feb8) &+ 0x4469_6666_456e_6731).littleEndian) { bytes.replaceSubrange(0..<8, with: $0) }
    withUnsafeBytes(of: UInt64(index).littleEndian) { bytes.replaceSubrange(8..<16, with: $0) }
    return bytes
}

let hostileCases: [HostileCase] = [
    HostileCase(name: "hostile-int-ids", summary: "100,000 exact integer ids in one Fibonacci slot vs random ids (flat keys and Identifiable)", make: {
        func workload(_ id: @escaping (Int) -> Int) -> HostileWorkload {
            var generator = SeededGenerator(seed: 0x1d5)
            let old = (0..<100_000).map { Row(id: id($0), value: 0) }
            var next = 100_000
            let new = perturb(old, ChangeRates(), using: &generator, update: { Row(id: $0.id, value: $0.value + 1) },
                              fresh: { _ in next += 1; return Row(id: id(next), value: 0) })
            let oldKeys = old.map { UInt64(bitPattern: Int64($0.id)) }, newKeys = new.map { UInt64(bitPattern: Int64($0.id)) }
            let verifier = makeVerifier(old, new, identity: \.id, sameContent: ==)
            let both = { (diff(oldKeys: oldKeys, newKeys: newKeys), try! diff(old, new, using: IdentifiableAdapter<Row>())) }
            return HostileWorkload(run: both) {
                let (flat, rows) = both()
                return verifier.check(rows, .minimal) + (flat.deletions == rows.deletions && flat.insertions == rows.insertions ? [] : ["flat keys differ"])
            }
        }
        let crafted = workload(fibonacciSlotZeroID)
        var random = SeededGenerator(seed: 0xabc)
        let randomIDs = (0..<120_000).map { _ in Int.random(in: .min ... .max, using: &random) }
        return (crafted, workload { randomIDs[$0 % randomIDs.count] })
    }, runs: 11),
    HostileCase(name: "hostile-byte-ids", summary: "32,000 [UInt8] ids sharing one full XXH3-64 vs random 32-byte ids", make: {
        func workload(_ id: @escaping (Int) -> [UInt8]) -> HostileWorkload {
            var generator = SeededGenerator(seed: 0xb17e5)
            let old = (0..<32_000).map { ByteIDRow(id: id($0), value: 0) }
            var next = 32_000
            let new = perturb(old, ChangeRates(), using: &generator, update: { ByteIDRow(id: $0.id, value: 1) },
                              fresh: { _ in next += 1; return ByteIDRow(id: id(next), value: 0) })
            let verifier = makeVerifier(old, new, identity: \.id, sameContent: ==)
            let run = { try! diff(old, new, using: IdentifiableAdapter<ByteIDRow>()) }
            return HostileWorkload(run: run) { verifier.check(run(), .minimal) }
        }
        return (workload(xxh3CollidingID), workload { index in
            var generator = SeededGenerator(seed: UInt64(index) &+ 1)
            return (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        })
    }, runs: 11),
    HostileCase(name: "hostile-csv-keys", summary: "CSV pair of 110,000 keys crafted against the unkeyed table vs random keys (read + diff)",
                make: { keyedFileWorkloads(keys: 110_000, json: false, seed: 0xc5f) }, runs: 11),
    HostileCase(name: "hostile-jsonl-ids", summary: "JSON Lines pair of 55,000 string ids crafted against the unkeyed table vs random ids (read + diff)",
                make: { keyedFileWorkloads(keys: 55_000, json: true, seed: 0x75a) }, runs: 11),
    HostileCase(name: "hostile-json-wide", summary: "one JSON object of 80,000 members in descending order vs ascending (canonicalised)", make: {
        func workload(descending: Bool) -> HostileWorkload {
            let names = (0..<80_000).map { String(format: "m%06d", $0) }
            let text = Array(("{" + (descending ? names.reversed() : names).map { "\"\($0)\":1" }.joined(separator: ",") + "}").utf8)
            let run = { () -> [UInt8]? in
                var documents = JSONDocuments(keys: ["m000000"])
                guard let row = try? text.withUnsafeBytes({ try documents.append(json: $0) }) else { return nil }
                return Array(documents.canonicalBytes[row.content])
            }
            return HostileWorkload(run: run) { run() == nil ? ["did not parse"] : [] }
        }
        return (workload(descending: true), workload(descending: false))
    }, runs: 11),
    HostileCase(name: "hostile-csv-blank", summary: "diffengine on a one-column CSV of 200,000 blank lines then a row vs 200,000 one-character rows", make: {
        func workload(_ body: String, rows: Int) -> HostileWorkload {
            let path = hostileFile("blank-\(rows).csv", Array(("id\n" + body + "x\n").utf8))
            let run = { () -> Changeset? in tableDiff(path, path) }
            return HostileWorkload(run: run) { run()?.oldCount == rows ? [] : ["read \(run()?.oldCount ?? -1) rows"] }
        }
        return (workload(String(repeating: "\n", count: 200_000), rows: 1), workload(String(repeating: "a\n", count: 200_000), rows: 200_001))
    }, runs: 11),
    HostileCase(name: "hostile-observers", summary: "8 producers × 20,000 updates: last delivery after the producers stop, 1,000 observers vs 10", make: {
        func workload(observers: Int) -> HostileWorkload {
            let run = { () -> [String] in
                let collection = LiveCollection(adapter: IdentifiableAdapter<Row>(), initial: [])
                let reached = Counter()
                let final = (0..<50).map { Row(id: $0, value: -1) }
                let tokens = (0..<observers).map { _ in
                    collection.observe { event in
                        if event.snapshot == final { reached.increment() }
                    }
                }
                DispatchQueue.concurrentPerform(iterations: 8) { producer in
                    for step in 0..<20_000 { collection.update((0..<(step % 50)).map { Row(id: $0, value: producer) }) }
                }
                // The timed part that matters is what follows the burst: the same for both.
                collection.update(final)
                let deadline = Date().addingTimeInterval(120)
                while reached.value < observers && Date() < deadline { usleep(200) }
                withExtendedLifetime(tokens) {}
                return reached.value == observers ? [] : ["\(observers - reached.value) observers never got the final snapshot"]
            }
            return HostileWorkload(run: run, check: run)
        }
        return (workload(observers: 1_000), workload(observers: 10))
    }, runs: 3),
]

/// A count shared between threads.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}

/// `count` distinct string keys whose stable hash (of the key's bytes, or of its canonical
/// JSON string encoding) times 0x9e3779b97f4a7c15 has ten zero high bits: under the old,
/// unkeyed placement every one of them landed in the first 1/1024 of the identity table.
/// Found by brute force over "k" + ten digits (about 1,024 hashes a key).
func craftedKeys(_ count: Int, canonicalJSON: Bool) -> [String] {
    let prefix: [UInt8] = canonicalJSON ? [UInt8(ascii: "s"), 11, 0, 0, 0] : []
    var buffer = prefix + Array("k0000000000".utf8)
    let digits = prefix.count + 1..<buffer.count
    var keys: [String] = []
    keys.reserveCapacity(count)
    while keys.count < count {
        let hash = buffer.withUnsafeBytes { stableHash(bytes: $0) }
        if (hash &* 0x9e37_79b9_7f4a_7c15) >> 54 == 0 {
            keys.append(String(decoding: buffer[digits.lowerBound - 1..<buffer.count], as: UTF8.self))
        }
        var index = digits.upperBound - 1 // the next number, in place
        while buffer[index] == UInt8(ascii: "9") {
            buffer[index] = UInt8(ascii: "0")
            index -= 1
        }
        buffer[index] += 1
    }
    return keys
}

/// A keyed table diff as `diffengine` runs it, on two files holding the given text,
/// keyed by the `id` column (CSV) or member (JSON Lines).
func keyedFileWorkload(old: [UInt8], new: [UInt8], json: Bool, expectedRows: (Int, Int)) -> HostileWorkload {
    let ext = json ? "jsonl" : "csv"
    let oldPath = hostileFile("old-\(old.count).\(ext)", old), newPath = hostileFile("new-\(new.count).\(ext)", new)
    let run = { () -> Changeset? in tableDiff(oldPath, newPath) }
    return HostileWorkload(run: run) {
        guard let changes = run() else { return ["did not read"] }
        return (changes.oldCount, changes.newCount) == expectedRows && changes.hasChanges ? [] : ["unexpected counts"]
    }
}

/// The index form of `diffengine OLD NEW --key id`, run in-process; nil on an input error.
func tableDiff(_ old: String, _ new: String) -> Changeset? {
    guard let command = try? DiffEngineCommand.parse([old, new, "--key", "id", "--format", "indexes"]),
          let output = try? command.output() else { return nil }
    return try? JSONDecoder().decode(Changeset.self, from: Data(output.bytes))
}

/// Writes a hostile input to a per-process folder, removed when the process exits.
func hostileFile(_ name: String, _ bytes: [UInt8]) -> String {
    let path = hostileFolder + "/" + UUID().uuidString + "-" + name
    FileManager.default.createFile(atPath: path, contents: Data(bytes))
    return path
}

private let hostileFolder: String = {
    let folder = NSTemporaryDirectory() + "diffbench-hostile-\(getpid())"
    try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    atexit { try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "diffbench-hostile-\(getpid())") }
    return folder
}()

/// The crafted keyed-file pair and its random twin: `keys` keys, CSV or JSON Lines.
func keyedFileWorkloads(keys: Int, json: Bool, seed: UInt64) -> (crafted: HostileWorkload, random: HostileWorkload) {
    let crafted = keyedFiles(craftedKeys(keys, canonicalJSON: json), json: json)
    var generator = SeededGenerator(seed: seed)
    let random = keyedFiles((0..<keys).map { _ in "k" + String(UInt64.random(in: 0..<10_000_000_000, using: &generator)) }, json: json)
    return (keyedFileWorkload(old: crafted.old, new: crafted.new, json: json, expectedRows: crafted.rows),
            keyedFileWorkload(old: random.old, new: random.new, json: json, expectedRows: random.rows))
}

/// Old and new files over `keys` (the last tenth only inserted): 10% deleted, 10% inserted,
/// 2% moved, 2% updated, as CSV or JSON Lines.
func keyedFiles(_ keys: [String], json: Bool) -> (old: [UInt8], new: [UInt8], rows: (Int, Int)) {
    struct Record { var key: String; var value: Int }
    var generator = SeededGenerator(seed: 0xf11e)
    let oldCount = keys.count * 10 / 11
    let old = (0..<oldCount).map { Record(key: keys[$0], value: $0) }
    var next = oldCount
    let new = perturb(old, ChangeRates(), using: &generator, update: { Record(key: $0.key, value: -$0.value) },
                      fresh: { _ in next += 1; return Record(key: keys[Swift.min(next - 1, keys.count - 1)], value: 0) })
    func render(_ records: [Record]) -> [UInt8] {
        let lines = records.map { json ? "{\"id\":\"\($0.key)\",\"v\":\($0.value)}" : "\($0.key),\($0.value)" }
        return Array(((json ? "" : "id,v\n") + lines.joined(separator: "\n") + "\n").utf8)
    }
    return (render(old), render(new), (old.count, new.count))
}

/// Runs the selected hostile cases: checks both answers, then times them interleaved.
func measureHostile(_ cases: [HostileCase], runs: Int?) -> [Measurement] {
    var measurements: [Measurement] = []
    for hostile in cases {
        progress("\(hostile.name): generating (\(hostile.summary))")
        let (crafted, random) = hostile.make()
        var craftedMeasurement = Measurement(scenario: hostile.name, engine: "crafted", status: .ok)
        var randomMeasurement = Measurement(scenario: hostile.name, engine: "random twin", status: .ok)
        let problems = crafted.check() + random.check()
        if !problems.isEmpty {
            craftedMeasurement.status = .failed(problems)
            measurements.append(craftedMeasurement)
            continue
        }
        let count = runs ?? hostile.runs
        var craftedTimes: [Double] = [], randomTimes: [Double] = []
        let clock = ContinuousClock()
        for _ in 0..<count { // interleaved, so both see the same machine
            craftedTimes.append(milliseconds(clock.measure { blackHole(crafted.run()) }))
            randomTimes.append(milliseconds(clock.measure { blackHole(random.run()) }))
        }
        for (times, index) in [(craftedTimes.sorted(), 0), (randomTimes.sorted(), 1)] {
            var measurement = index == 0 ? craftedMeasurement : randomMeasurement
            measurement.runs = count
            measurement.medianMilliseconds = median(times)
            measurement.minMilliseconds = times.first
            measurement.maxMilliseconds = times.last
            if index == 0 { craftedMeasurement = measurement } else { randomMeasurement = measurement }
        }
        craftedMeasurement.ratioToRandomTwin = craftedMeasurement.medianMilliseconds! / randomMeasurement.medianMilliseconds!
        measurements += [craftedMeasurement, randomMeasurement]
    }
    return measurements
}

/// The hostile table: crafted and random medians side by side and their ratio.
func renderHostileTable(_ measurements: [Measurement]) -> String {
    var lines = ["hostile input     crafted median ms   random median ms   crafted/random"]
    for crafted in measurements where crafted.engine == "crafted" {
        let name = crafted.scenario.padding(toLength: 17, withPad: " ", startingAt: 0)
        guard crafted.status == .ok,
              let twin = measurements.first(where: { $0.scenario == crafted.scenario && $0.engine == "random twin" }) else {
            lines.append("\(name) \(crafted.status)")
            continue
        }
        lines.append(name + String(format: "%18.3f %18.3f %16.2f", crafted.medianMilliseconds ?? 0,
                                   twin.medianMilliseconds ?? 0, crafted.ratioToRandomTwin ?? 0))
    }
    return lines.joined(separator: "\n")
}
