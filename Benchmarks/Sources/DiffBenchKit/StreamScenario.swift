import CMallocCounter
import DiffEngine
import DiffEngineTestSupport
import Foundation

/// A stream of snapshots for the stateful differ: each the previous one with `churn` of
/// its rows changed (a quarter each deleted, inserted, moved, updated, unless `mix` says
/// otherwise).
struct SnapshotStream {
    var name: String
    var rows: Int
    var snapshots: Int
    var churn: Double
    /// The shares of `churn` deleted, inserted, moved and updated (they add up to 1).
    var mix = ChurnMix.quarters
    /// `Record` rows (UUID ids, hashed) instead of `Row` rows (integer ids, exact keys).
    var records = false
    /// Only contents change (`churn` of the rows get a new value): no row is deleted,
    /// inserted or moved, as when a live query's rows update in place.
    var updatesOnly = false
    /// Rows come only at the end (`churn` of the rows a snapshot, new ids), and as many of
    /// the last 1% get a new value, as in a chat or a log: the snapshots share a long prefix.
    var atTheEnd = false

    var summary: String {
        let change = updatesOnly ? "updated" : atTheEnd ? "appended, as many updated near the end"
            : mix == .quarters ? "churn"
            : "churn (deleted, inserted, moved, updated in parts \(mix.deleted):\(mix.inserted):\(mix.moved):\(mix.updated))"
        return "Differ over \(snapshots) snapshots of \(rows) \(records ? "records (UUID ids)" : "rows"), \(churn * 100)% \(change) each"
    }

    /// The snapshots of `make()` as `Record`s: each id its own UUID and title, the value as
    /// the price (so an updated row has a new price), every fourth row without a date.
    func makeRecords() -> [[Record]] {
        let snapshots = make()
        let maxID = snapshots.lazy.flatMap { $0 }.map(\.id).max() ?? 0
        var generator = SeededGenerator(seed: 0x2EC0_57EA &+ UInt64(rows))
        let ids = (0...maxID).map { _ in randomUUID(&generator) }
        let titles = (0...maxID).map { "Order \($0)" }
        return snapshots.map { snapshot in
            snapshot.map { row in
                Record(id: ids[row.id], title: titles[row.id], price: Double(row.value) / 100,
                       updatedAt: row.id % 4 == 0 ? nil : Date(timeIntervalSinceReferenceDate: Double(row.id % 7 * 86_400)))
            }
        }
    }

    /// The snapshots, each made from the previous in one linear pass.
    func make() -> [[Row]] {
        if updatesOnly { return makeUpdates() }
        if atTheEnd { return makeAppends() }
        var generator = SeededGenerator(seed: 0x57_AEA3 &+ UInt64(rows))
        var nextID = 0
        func fresh(_ generator: inout SeededGenerator) -> Row {
            nextID += 1
            return Row(id: nextID, value: Int.random(in: 0..<1000, using: &generator))
        }
        var current = (0..<rows).map { _ in fresh(&generator) }
        var result = [current]
        let changes = Swift.max(4, Int(Double(rows) * churn))
        let deletes = mix.share(of: changes, \.deleted), moves = mix.share(of: changes, \.moved)
        let insertions = mix.share(of: changes, \.inserted), updates = mix.share(of: changes, \.updated)
        for _ in 1..<snapshots {
            // Drawn in the generator's order, not a set's (whose order changes with each
            // process's hash seed): every process makes the same snapshots.
            var drop = Set<Int>(), dropped: [Int] = []
            while drop.count < deletes + moves && drop.count < current.count {
                let index = Int.random(in: 0..<current.count, using: &generator)
                if drop.insert(index).inserted { dropped.append(index) }
            }
            // The first `deletes` dropped rows are deleted; the others move to a random place.
            var inserts: [(position: Int, row: Row)] = dropped.dropFirst(deletes).map { (Int.random(in: 0...current.count, using: &generator), current[$0]) }
            inserts += (0..<insertions).map { _ in (Int.random(in: 0...current.count, using: &generator), fresh(&generator)) }
            inserts.sort { $0.position < $1.position }
            var next: [Row] = []
            next.reserveCapacity(current.count + insertions)
            var pending = inserts[...]
            for index in current.indices {
                while let first = pending.first, first.position == index {
                    next.append(first.row)
                    pending.removeFirst()
                }
                if !drop.contains(index) { next.append(current[index]) }
            }
            next.append(contentsOf: pending.map(\.row))
            for _ in 0..<updates {
                let index = Int.random(in: 0..<next.count, using: &generator)
                next[index].value += 1
            }
            result.append(next)
            current = next
        }
        return result
    }
}

/// How a stream's churn divides into deleted, inserted, moved and updated rows, in parts.
struct ChurnMix: Equatable {
    var deleted, inserted, moved, updated: Int
    static let quarters = ChurnMix(deleted: 1, inserted: 1, moved: 1, updated: 1)

    /// How many of `changes` rows the kind at `part` takes (rounded down).
    func share(of changes: Int, _ part: KeyPath<ChurnMix, Int>) -> Int {
        changes * self[keyPath: part] / (deleted + inserted + moved + updated)
    }
}

/// The 1% streams are the `Differ`'s headline; the calm (0.1%) and busy (3%) ones show how
/// its lead over a one-shot diff changes with the churn: both pay about as much for each
/// changed row, and the `Differ` saves only on the rows that did not change. In the updates
/// stream rows only change their contents, so the walk never leaves the sequence.
extension SnapshotStream {
    /// `make()` when only contents change: each snapshot the previous with `churn` of its
    /// rows, drawn at random, given a new value.
    func makeUpdates() -> [[Row]] {
        var generator = SeededGenerator(seed: 0x0FDA_7E5 &+ UInt64(rows))
        var current = (0..<rows).map { Row(id: $0 + 1, value: Int.random(in: 0..<1000, using: &generator)) }
        var result = [current]
        let updates = Swift.max(1, Int(Double(rows) * churn))
        for _ in 1..<snapshots {
            for _ in 0..<updates {
                current[Int.random(in: 0..<current.count, using: &generator)].value += 1
            }
            result.append(current)
        }
        return result
    }
}

extension SnapshotStream {
    /// `make()` when rows come only at the end: each snapshot the previous with `churn` of
    /// `rows` appended (new ids) and as many rows of the last 1% given a new value.
    func makeAppends() -> [[Row]] {
        var generator = SeededGenerator(seed: 0x0A_99E7D &+ UInt64(rows))
        var current = (0..<rows).map { Row(id: $0 + 1, value: Int.random(in: 0..<1000, using: &generator)) }
        var nextID = rows
        var result = [current]
        let changes = Swift.max(1, Int(Double(rows) * churn))
        for _ in 1..<snapshots {
            for _ in 0..<changes {
                nextID += 1
                current.append(Row(id: nextID, value: Int.random(in: 0..<1000, using: &generator)))
            }
            let nearTheEnd = current.count - Swift.max(1, current.count / 100)
            for _ in 0..<changes {
                current[Int.random(in: nearTheEnd..<current.count, using: &generator)].value += 1
            }
            result.append(current)
        }
        return result
    }
}

let allStreams = [
    SnapshotStream(name: "differ-5k", rows: 5_000, snapshots: 200, churn: 0.01),
    SnapshotStream(name: "differ-100k", rows: 100_000, snapshots: 1_000, churn: 0.01),
    SnapshotStream(name: "differ-calm-100k", rows: 100_000, snapshots: 200, churn: 0.001),
    SnapshotStream(name: "differ-busy-100k", rows: 100_000, snapshots: 200, churn: 0.03),
    // A live query's stream: 500 rows deleted, 500 inserted, 250 moved, 250 updated an update.
    SnapshotStream(name: "differ-moves-100k", rows: 100_000, snapshots: 200, churn: 0.015,
                   mix: ChurnMix(deleted: 2, inserted: 2, moved: 1, updated: 1)),
    SnapshotStream(name: "differ-updates-100k", rows: 100_000, snapshots: 200, churn: 0.01, updatesOnly: true),
    SnapshotStream(name: "differ-appends-100k", rows: 100_000, snapshots: 200, churn: 0.001, atTheEnd: true),
    SnapshotStream(name: "differ-uuid-5k", rows: 5_000, snapshots: 200, churn: 0.01, records: true),
    SnapshotStream(name: "differ-uuid-100k", rows: 100_000, snapshots: 200, churn: 0.01, records: true),
    SnapshotStream(name: "differ-uuid-appends-100k", rows: 100_000, snapshots: 200, churn: 0.001, records: true, atTheEnd: true),
]

/// `measureStream` for each of `engines` that `wanted` names (all when nil), in order.
func measureStream<StreamRow: Identifiable & Equatable>(
    _ stream: SnapshotStream, snapshots: [[StreamRow]],
    engines: [(name: EngineName, make: @Sendable () -> ([StreamRow]) -> Changeset)], wanted: [String]?,
    updates: Int? = nil
) -> [Measurement] {
    engines.filter { wanted?.contains($0.name.rawValue) ?? true }.map { engine, make in
        progress("\(stream.name): \(engine.rawValue): checking every tenth update, then timing each")
        return measureStream(stream, snapshots: snapshots, engine: engine, makeEngine: make, updates: updates)
    }
}

/// Runs a stream engine over the stream: once checking every tenth update against the
/// reference, then timing `updates` updates (one pass over the snapshots by default; each
/// further pass starts a fresh engine on the first snapshot, untimed, so that a profiler
/// sees mostly updates). Per-update median, min and max; bytes kept a row (heap held by the
/// last engine between updates); allocations per update. `makeEngine` gives a fresh
/// engine: a function from each snapshot to the changeset from the one before.
func measureStream<StreamRow: Identifiable & Equatable>(
    _ stream: SnapshotStream, snapshots: [[StreamRow]], engine: EngineName,
    makeEngine: @Sendable () -> ([StreamRow]) -> Changeset, updates: Int? = nil
) -> Measurement {
    var measurement = Measurement(scenario: stream.name, engine: engine.rawValue, status: .ok)
    let checking = makeEngine()
    _ = checking(snapshots[0])
    for index in 1..<snapshots.count {
        let changeset = checking(snapshots[index])
        guard index % 10 == 1 else { continue }
        let old = snapshots[index - 1], new = snapshots[index]
        let application = checkApplication(changeset, old: old, new: new, sameIdentity: { $0.id == $1.id }, sameContent: ==)
        var problems = application.problems
        if problems.isEmpty {
            problems = checkPairing(changeset, implied: application.implied, mode: .minimal,
                                    reference: indexedReferenceDiff(old, new, identity: \.id, sameContent: ==))
        }
        if !problems.isEmpty {
            measurement.status = .failed(["update \(index): " + problems.prefix(2).joined(separator: "; ")])
            return measurement
        }
    }

    let timedUpdates = updates ?? snapshots.count - 1
    let clock = ContinuousClock()
    var times: [Double] = []
    var allocations: Int64 = 0
    var held: Int64 = 0
    while times.count < timedUpdates && snapshots.count > 1 {
        let heapBefore = mc_current_bytes()
        let differ = makeEngine()
        _ = differ(snapshots[0])
        let allocationsBefore = mc_allocations()
        for snapshot in snapshots.dropFirst() where times.count < timedUpdates {
            var update: Changeset?
            let elapsed = clock.measure { update = differ(snapshot) }
            blackHole(update)
            times.append(milliseconds(elapsed))
        }
        allocations += mc_allocations() - allocationsBefore
        held = mc_current_bytes() - heapBefore
        withExtendedLifetime(differ) {}
    }
    times.sort()
    measurement.runs = times.count
    measurement.medianMilliseconds = median(times)
    measurement.minMilliseconds = times.first
    measurement.maxMilliseconds = times.last
    if mc_is_active() != 0 {
        measurement.allocations = Int(allocations) / Swift.max(times.count, 1)
        // Between updates the engine holds its kept state plus reusable buffers and workspace
        // (a kept snapshot shares the benchmark's arrays, so it does not count here).
        measurement.peakBytesPerRow = Double(held) / Double(stream.rows)
    }
    return measurement
}

/// The stream engines, each a fresh engine per call: the differ in both kinds of state and
/// the one-shot diff of each pair of consecutive snapshots (with each adapter), the baseline
/// a differ must beat.
/// `recordStreamEngines` are the same over `Record` rows.
let streamEngines: [(name: EngineName, make: @Sendable () -> ([Row]) -> Changeset)] = [
    (.differKeypath, {
        let differ = Differ(keepingPreviousSnapshotOf: KeyPathAdapter(identity: \Row.id, content: \.value))
        return { differ.diff($0).changeset }
    }),
    (.differIdentifiable, {
        let differ = Differ(keepingPreviousSnapshotOf: IdentifiableAdapter<Row>())
        return { differ.diff($0).changeset }
    }),
    (.differKeypathHashes, {
        let differ = Differ(keepingOnlyHashesOf: KeyPathAdapter(identity: \Row.id, content: \.value))
        return { differ.diff($0).changeset }
    }),
    (.oneshotIdentifiable, {
        var previous: [Row] = []
        return { next in
            defer { previous = next }
            return try! diff(previous, next, using: IdentifiableAdapter<Row>())
        }
    }),
    (.oneshotKeypath, {
        var previous: [Row] = []
        return { next in
            defer { previous = next }
            return try! diff(previous, next, using: KeyPathAdapter(identity: \Row.id, content: \.value))
        }
    }),
]

let recordStreamEngines: [(name: EngineName, make: @Sendable () -> ([Record]) -> Changeset)] = [
    (.differKeypath, {
        let differ = Differ(keepingPreviousSnapshotOf: KeyPathAdapter(identity: \Record.id, content: \.title, \.price, \.updatedAt))
        return { differ.diff($0).changeset }
    }),
    (.differIdentifiable, {
        let differ = Differ(keepingPreviousSnapshotOf: IdentifiableAdapter<Record>())
        return { differ.diff($0).changeset }
    }),
    (.differKeypathHashes, {
        let differ = Differ(keepingOnlyHashesOf: KeyPathAdapter(identity: \Record.id, content: \.title, \.price, \.updatedAt))
        return { differ.diff($0).changeset }
    }),
    (.oneshotIdentifiable, {
        var previous: [Record] = []
        return { next in
            defer { previous = next }
            return try! diff(previous, next, using: IdentifiableAdapter<Record>())
        }
    }),
    (.oneshotKeypath, {
        var previous: [Record] = []
        return { next in
            defer { previous = next }
            return try! diff(previous, next, using: KeyPathAdapter(identity: \Record.id, content: \.title, \.price, \.updatedAt))
        }
    }),
]
