@_spi(Testing) import DiffEngine
import DiffEngineTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A row decoded from one input byte.
struct FuzzRow: Identifiable, Hashable, CustomStringConvertible {
    var id: Int
    var name: String
    var content: Int
    var description: String { "\(id):\(content)" }
}

/// An adapter whose keys collide on purpose (identity modulo 2), defined outside the
/// engine as any plugin would be.
struct CollidingFuzzAdapter: RowAdapter {
    func identityKey(of row: FuzzRow) -> UInt64 { UInt64(row.id & 1) }
    func identitiesEqual(_ lhs: FuzzRow, _ rhs: FuzzRow) -> Bool { lhs.id == rhs.id }
    func contentsEqual(_ lhs: FuzzRow, _ rhs: FuzzRow) -> Bool { lhs.content == rhs.content }
    func contentHash(of row: FuzzRow) -> UInt64 { UInt64(row.content) }
}

/// The adapter paths the target drives.
enum AdapterKind: Int, CaseIterable {
    case identifiableIntIDs, keyPathStringIDs, byteRows, wholeValues, colliding
}

/// The renderers and the stateful differ, checked beside the plain diffs.
enum ExtraMode: Int, CaseIterable {
    case projection, sections, differStream
}

/// Decodes the input, diffs through the public API and checks the answer against the
/// naive reference (DiffEngine.docc/Correctness.md). On a disagreement: both answers and the input in
/// hex on stderr, then abort, in release builds too.
///
/// Input: body bytes then three option bytes: [move mode + policy] [adapter + weakened
/// bits] [split; odd: `parallelism` 2 from 64 rows]. Each body byte is a row: identity
/// byte % alphabet, content (byte / alphabet) % 4.
public func fuzzSwiftAPI(_ data: UnsafeRawBufferPointer) {
    guard data.count >= 3 else { return }
    let bytes = Array(data)
    let first = Int(bytes[bytes.count - 1]), second = Int(bytes[bytes.count - 2]), split = Int(bytes[bytes.count - 3])
    let mode = MoveMode.allCases[first % 3]
    let policy = DuplicatePolicy.allCases[(first / 3) % 3]
    let alphabet = 2 + (first / 9) % 10
    let kinds = AdapterKind.allCases.count + ExtraMode.allCases.count
    let weakBits = [0, 0, 1, 2, 3][(second / kinds) % 5]
    let body = bytes.dropLast(3)
    if second % kinds >= AdapterKind.allCases.count {
        let mode = ExtraMode.allCases[second % kinds - AdapterKind.allCases.count]
        fuzzExtra(mode, body: Array(body), moves: MoveMode.allCases[first % 3], alphabet: alphabet,
                  split: split, weakBits: weakBits, input: bytes)
        return
    }
    let adapter = AdapterKind.allCases[second % kinds]
    let oldCount = body.count * split / 255
    // One name an identity, made once: interpolating a string a row cost more than the diff.
    let names = (0..<alphabet).map { "row-\($0)" }
    func row(_ byte: UInt8) -> FuzzRow {
        let id = Int(byte) % alphabet
        return FuzzRow(id: id, name: names[id], content: (Int(byte) / alphabet) % 4)
    }
    let old = body.prefix(oldCount).map(row), new = body.dropFirst(oldCount).map(row)
    var options = DiffOptions(moves: mode, duplicates: policy)
    if split % 2 == 1 {
        // Two threads from 64 rows a side: keys of both sides at once, the updates in halves.
        options.parallelism = 2
        options.parallelRowThresholdForTesting = 64
    }

    let sameIdentity: (FuzzRow, FuzzRow) -> Bool = { $0.id == $1.id }
    let sameContent: (FuzzRow, FuzzRow) -> Bool = adapter == .wholeValues ? { $0 == $1 } : { $0.content == $1.content }
    // Keys cut to `weakBits` bits (when not 0): collisions everywhere, same answers.
    func oneShot<Adapter: RowAdapter>(_ adapter: Adapter, _ old: [Adapter.Row], _ new: [Adapter.Row]) -> Result<Changeset, DuplicateIdentityError> {
        Result { () throws(DuplicateIdentityError) in
            weakBits == 0 ? try diff(old, new, using: adapter, options: options)
                : try diff(old, new, using: WeakenedKeys(adapter, bits: weakBits), options: options)
        }
    }
    let result: Result<Changeset, DuplicateIdentityError>
    switch adapter {
    case .identifiableIntIDs:
        result = oneShot(IdentifiableAdapter<FuzzRow>(), old, new)
    case .keyPathStringIDs:
        result = oneShot(KeyPathAdapter(identity: \FuzzRow.name, content: \.content), old, new)
    case .byteRows:
        // Each row as the bytes "name,content"; identity the name's bytes.
        var buffer: [UInt8] = []
        func span(_ row: FuzzRow) -> ByteRow {
            let start = buffer.count
            buffer.append(contentsOf: row.name.utf8)
            let end = buffer.count
            buffer.append(contentsOf: ",\(row.content)".utf8)
            return ByteRow(identity: start..<end, content: start..<buffer.count)
        }
        let oldRows = old.map(span), newRows = new.map(span)
        let byteAdapter = ByteRowAdapter(bytes: buffer)
        result = oneShot(byteAdapter, oldRows, newRows)
    case .wholeValues:
        result = oneShot(HashableAdapter<FuzzRow>(), old, new)
    case .colliding:
        result = oneShot(CollidingFuzzAdapter(), old, new)
    }

    // Whole values: identity is the whole row, so compare as such.
    let identity: (FuzzRow, FuzzRow) -> Bool = adapter == .wholeValues ? { $0 == $1 } : sameIdentity
    var problems: [String] = []
    switch (policy, result) {
    case (.reject, .failure(let error)):
        let expected = referenceFirstRepeat(old, sameIdentity: identity).map { (DiffSide.old, $0) }
            ?? referenceFirstRepeat(new, sameIdentity: identity).map { (DiffSide.new, $0) }
        if let (side, indexes) = expected {
            if error.side != side || error.firstIndex != indexes.first || error.secondIndex != indexes.second {
                problems.append("reject named \(error), expected \(side) \(indexes)")
            }
        } else {
            problems.append("reject threw \(error) without a repeat")
        }
    case (_, .failure(let error)):
        problems.append("\(policy) threw \(error)")
    case (.firstWins, .success(let changes)):
        let (keptOld, droppedOld) = referenceDeduplicate(old, sameIdentity: identity)
        let (keptNew, droppedNew) = referenceDeduplicate(new, sameIdentity: identity)
        if changes.droppedOld != droppedOld || changes.droppedNew != droppedNew {
            problems.append("dropped \(String(describing: changes.droppedOld)) \(String(describing: changes.droppedNew)), expected \(droppedOld) \(droppedNew)")
        }
        problems += checkChangeset(changes, old: keptOld, new: keptNew, mode: mode, sameIdentity: identity, sameContent: sameContent)
    case (.reject, .success(let changes)):
        if referenceFirstRepeat(old, sameIdentity: identity) != nil || referenceFirstRepeat(new, sameIdentity: identity) != nil {
            problems.append("reject did not throw on a repeated identity")
        }
        problems += checkChangeset(changes, old: old, new: new, mode: mode, sameIdentity: identity, sameContent: sameContent)
    case (.pairInOrder, .success(let changes)):
        problems += checkChangeset(changes, old: old, new: new, mode: mode, sameIdentity: identity, sameContent: sameContent)
    }
    guard !problems.isEmpty else { return }
    fail("\(adapter) \(mode) \(policy) weak bits \(weakBits)", problems: problems,
         details: "old: \(old)\n  new: \(new)\n  engine: \(result)\n  reference: \(referenceChangeset(old, new, sameIdentity: identity, sameContent: sameContent))",
         input: bytes)
}

/// Prints the disagreement, both answers and the input in hex, then aborts (in release too).
func fail(_ what: String, problems: [String], details: String, input: [UInt8]) -> Never {
    var report = "fuzz: \(what)\n  problems: \(problems.prefix(5))\n  \(details)\n"
    report += "  input (\(input.count) bytes): " + input.map { String($0, radix: 16) }.joined(separator: " ") + "\n"
    report.withCString { _ = write(2, $0, strlen($0)) }
    abort()
}

/// The projection, the staged sections and the differ, on rows decoded from `body`.
func fuzzExtra(_ mode: ExtraMode, body: [UInt8], moves: MoveMode, alphabet: Int, split: Int, weakBits: Int, input: [UInt8]) {
    func row(_ byte: UInt8) -> TestRow { TestRow(id: Int(byte) % alphabet, content: (Int(byte) / alphabet) % 4) }
    let sameRow: (TestRow, TestRow) -> Bool = { $0.id == $1.id }
    switch mode {
    case .projection:
        // Every projection passes the UIKit-rules validator and applies to the new rows.
        let oldCount = body.count * split / 255
        let old = body.prefix(oldCount).map(row), new = body.dropFirst(oldCount).map(row)
        let changes = try! diff(old, new, options: DiffOptions(moves: moves))
        let batch = BatchUpdateRenderer().render(changes)
        let problems = simulateBatch(batch, from: [SectionData(header: 0, items: old)], to: [SectionData(header: 0, items: new)],
                                     sameSection: ==, sameHeaderContent: ==, sameItem: sameRow, sameItemContent: ==)
        if !problems.isEmpty { fail("projection \(moves)", problems: problems, details: "old: \(old)\n  new: \(new)\n  batch: \(batch)", input: input) }
    case .sections:
        // Bytes with low nibble 15 open a section (header id from the high bits); the others are items.
        func sections(_ bytes: ArraySlice<UInt8>) -> [SectionData<TestRow, TestRow>] {
            var result: [SectionData<TestRow, TestRow>] = []
            for byte in bytes {
                if byte & 15 == 15 {
                    result.append(SectionData(header: TestRow(id: Int(byte >> 4) % 5, content: Int(byte >> 6)), items: []))
                } else if result.isEmpty {
                    result.append(SectionData(header: TestRow(id: 9, content: 0), items: [row(byte)]))
                } else {
                    result[result.count - 1].items.append(row(byte))
                }
            }
            return result
        }
        let oldCount = body.count * split / 255
        let old = sections(body.prefix(oldCount)), new = sections(body.dropFirst(oldCount))
        let staged = try! stagedDiff(old, new, headers: IdentifiableAdapter<TestRow>(), items: IdentifiableAdapter<TestRow>(),
                                     options: DiffOptions(moves: moves))
        let problems = checkStages(staged, old: old, new: new)
        if !problems.isEmpty { fail("sections \(moves)", problems: problems, details: "old: \(old)\n  new: \(new)\n  stages: \(staged.stages.map(\.batch))", input: input) }
    case .differStream:
        // Byte 0xFF separates snapshots; each update must reproduce its snapshot. Where
        // `split / 4` is odd, each part after the first replaces the previous snapshot's
        // end instead (its first byte: how many rows go), as when a chat or a log grows: the
        // snapshots share long prefixes, which the differ pairs in place.
        let parts = body.split(separator: 0xFF, omittingEmptySubsequences: false)
        var snapshots = parts.map { $0.map(row) }
        if (split / 4) % 2 == 1 {
            for index in snapshots.indices.dropFirst() {
                let part = parts[index], kept = snapshots[index - 1]
                let cut = part.first.map { Int($0) % (kept.count + 1) } ?? 0
                snapshots[index] = Array(kept.dropLast(cut)) + part.dropFirst().map(row)
            }
        }
        // By the split byte: the default differ (previous snapshot kept, compared with ==,
        // identities verified, also under weakened hashes), hash-only state, key paths
        // to integer fields (read and compared where they lie while the carried keys pair),
        // and keys that collide (checked as the updates are compared).
        let diffNext: ([TestRow]) -> DifferUpdate<Int>
        // A differ keeping the snapshot of `adapter`, or of its keys cut to `weakBits` bits.
        func snapshotDiffer<Adapter: IdentifyingAdapter>(_ adapter: Adapter) -> ([TestRow]) -> DifferUpdate<Int>
        where Adapter.Row == TestRow, Adapter.Identity == Int {
            if weakBits == 0 {
                let differ = Differ(keepingPreviousSnapshotOf: adapter, moves: moves)
                return { differ.diff($0) }
            }
            let differ = Differ(keepingPreviousSnapshotOf: WeakenedKeys(adapter, bits: weakBits), moves: moves)
            return { differ.diff($0) }
        }
        switch split % 4 {
        case 0:
            diffNext = snapshotDiffer(IdentifiableAdapter<TestRow>())
        case 1:
            if weakBits == 0 {
                let differ = Differ(keepingOnlyHashesOf: IdentifiableAdapter<TestRow>(), moves: moves)
                diffNext = { differ.diff($0) }
            } else {
                let differ = Differ(keepingOnlyHashesOf: WeakenedKeys(IdentifiableAdapter<TestRow>(), bits: weakBits),
                                    moves: moves, keepsIdentities: true)
                diffNext = { differ.diff($0) }
            }
        case 2:
            diffNext = snapshotDiffer(KeyPathAdapter(identity: \TestRow.id, content: \.content))
        default:
            // Keys of two bits: a snapshot whose keys are distinct is carried, and a later row
            // of another identity on one of its keys is a collision the carried pairing must
            // catch, through the adapter or among the rows compared as bytes.
            if (split / 8) % 2 == 0 {
                let differ = Differ(keepingPreviousSnapshotOf: LowBitsKeyAdapter(bits: 2), moves: moves)
                diffNext = { differ.diff($0) }
            } else {
                let differ = Differ(keepingPreviousSnapshotOf: LowBitsValueKeyAdapter(bits: 2), moves: moves)
                diffNext = { differ.diff($0) }
            }
        }
        var previous: [TestRow] = []
        for (index, snapshot) in snapshots.enumerated() {
            let update = diffNext(snapshot)
            var problems = checkChangeset(update.changeset, old: previous, new: snapshot, mode: moves)
            if update.isInitial != (index == 0) { problems.append("isInitial is \(update.isInitial) at update \(index)") }
            if !problems.isEmpty { fail("differ stream \(moves) weak bits \(weakBits)", problems: problems, details: "update \(index): old: \(previous)\n  new: \(snapshot)", input: input) }
            previous = snapshot
        }
        fuzzFeed(snapshots, moves: moves, pace: split, input: input)
    }
}

/// The snapshots published to a `LiveFeed` read by three subscribers that ask for their next
/// event at different paces (from `pace`): every event turns what the subscriber had into the
/// newest rows, a publication's own changes go to those one behind, and at the end every
/// subscriber is at the newest rows.
func fuzzFeed(_ snapshots: [[TestRow]], moves: MoveMode, pace: Int, input: [UInt8]) {
    let feed = LiveFeed<IdentifiableAdapter<TestRow>, Int>(adapter: IdentifiableAdapter(), moves: moves)
    var cursors = [LiveFeed<IdentifiableAdapter<TestRow>, Int>.Cursor](repeating: .init(), count: 3)
    var mirrors = [[TestRow]?](repeating: nil, count: 3)
    var payloads = 0
    func read(_ subscriber: Int, at step: Int) {
        guard let event = feed.next(after: &cursors[subscriber]) else { return }
        var problems = checkChangeset(event.changeset, old: mirrors[subscriber] ?? [], new: event.publication.rows, mode: moves)
        if event.isInitial != (mirrors[subscriber] == nil) { problems.append("isInitial is \(event.isInitial)") }
        if event.isPublicationsOwn && event.changeset != event.publication.changeset { problems.append("its own changes differ from the publication's") }
        if event.publication.sequence != feed.latest?.sequence { problems.append("not the newest publication") }
        if !problems.isEmpty {
            fail("live feed \(moves)", problems: problems, details: "subscriber \(subscriber), step \(step): old: \(mirrors[subscriber] ?? [])\n  new: \(event.publication.rows)", input: input)
        }
        mirrors[subscriber] = event.publication.rows
    }
    for (step, snapshot) in snapshots.enumerated() {
        let newest = feed.latest?.rows
        // Nothing published only when the rows equal the newest publication's.
        if feed.publish(snapshot, payload: { _ in payloads += 1; return payloads }) == nil,
           newest == nil || (try? diff(newest!, snapshot))?.hasChanges != false {
            fail("live feed \(moves)", problems: ["a changed snapshot published nothing"], details: "step \(step)", input: input)
        }
        for subscriber in 0..<3 where (step + pace >> subscriber) % (subscriber + 1) == 0 { read(subscriber, at: step) }
    }
    for subscriber in 0..<3 {
        read(subscriber, at: snapshots.count)
        if feed.latest.map({ mirrors[subscriber] != $0.rows }) ?? false {
            fail("live feed \(moves)", problems: ["subscriber \(subscriber) did not end at the newest rows"], details: "", input: input)
        }
    }
    if payloads != feed.latest?.sequence ?? 0 { fail("live feed \(moves)", problems: ["\(payloads) payloads for \(feed.latest?.sequence ?? 0) publications"], details: "", input: input) }
}
