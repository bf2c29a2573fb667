@_spi(Testing) import DiffEngine
import DiffEngineTestSupport
import Testing

/// How a test differ keeps state.
enum DifferState: CustomStringConvertible, CaseIterable {
    case previousSnapshot, hashesOnly, hashesAndIdentities

    func make<Adapter: ContentHashingAdapter & IdentifyingAdapter>(_ adapter: Adapter, moves: MoveMode) -> Differ<Adapter> {
        switch self {
        case .previousSnapshot: Differ(keepingPreviousSnapshotOf: adapter, moves: moves)
        case .hashesOnly: Differ(keepingOnlyHashesOf: adapter, moves: moves)
        case .hashesAndIdentities: Differ(keepingOnlyHashesOf: adapter, moves: moves, keepsIdentities: true)
        }
    }

    /// A differ kept this way over `adapter`, or over its keys cut to `weakBits` bits
    /// (`WeakenedKeys`) when that is not 0, behind one type so that a test body runs on both.
    func make<Adapter: ContentHashingAdapter & IdentifyingAdapter>(
        _ adapter: Adapter, moves: MoveMode, weakBits: Int
    ) -> TestDiffer<Adapter.Row, Adapter.Identity> {
        weakBits == 0 ? TestDiffer(make(adapter, moves: moves))
            : TestDiffer(make(WeakenedKeys(adapter, bits: weakBits), moves: moves))
    }

    var description: String {
        switch self {
        case .previousSnapshot: "previous snapshot"
        case .hashesOnly: "hashes only"
        case .hashesAndIdentities: "hashes and identities"
        }
    }
}

/// A `Differ` of any adapter over `Row`: one test body runs on an adapter and on the same
/// adapter with weakened keys.
struct TestDiffer<Row, Identity: Hashable> {
    private let diffRows: ([Row]) -> DifferUpdate<Identity>
    private let probes: () -> (carried: Int, kept: Int, keysWalk: Bool)

    init<Adapter: IdentifyingAdapter>(_ differ: Differ<Adapter>) where Adapter.Row == Row, Adapter.Identity == Identity {
        diffRows = { differ.diff($0) }
        probes = { (differ.carriedPairings, differ.lastKeptKeys, differ.pairingWays["keys walk", default: 0] > 0) }
    }

    /// A differ keeping the previous snapshot of `adapter`, its keys cut to `weakBits` bits
    /// unless that is 0.
    static func snapshot<Adapter: IdentifyingAdapter>(_ adapter: Adapter, moves: MoveMode, weakBits: Int) -> Self
    where Adapter.Row == Row, Adapter.Identity == Identity {
        weakBits == 0 ? TestDiffer(Differ(keepingPreviousSnapshotOf: adapter, moves: moves))
            : TestDiffer(Differ(keepingPreviousSnapshotOf: WeakenedKeys(adapter, bits: weakBits), moves: moves))
    }

    func diff(_ rows: [Row]) -> DifferUpdate<Identity> { diffRows(rows) }
    var carriedPairings: Int { probes().carried }
    /// How many leading rows the last diff paired where they were, keeping their keys.
    var lastKeptKeys: Int { probes().kept }
    /// Whether the differ's walk reads keys only (no layout to compare rows by): it then
    /// keeps only the keys of the rows equal to the previous ones.
    var walksKeys: Bool { probes().keysWalk }

    /// Checks the last diff's kept rows after a diff from `previous` to `rows` that the walk
    /// paired: the rows with the previous identities at their indices (keys only: the rows
    /// equal to the previous ones) from the first on. Whether it was such a diff.
    func expectKeptPrefix(_ previous: [Row], _ rows: [Row], carriedBefore: Int, identity: (Row) -> Identity,
                          equal: (Row, Row) -> Bool, _ comment: Comment, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        guard carriedPairings > carriedBefore else { return false }
        let expected = walksKeys ? zip(previous, rows).prefix { equal($0, $1) }.count
            : zip(previous, rows).prefix { identity($0) == identity($1) }.count
        #expect(lastKeptKeys == expected, comment, sourceLocation: sourceLocation)
        return true
    }
}

/// A model whose `hash(into:)` hashes only `id` while `==` compares every field: the usual
/// advice for diffable data sources, and a trap for anything that compares by hash.
struct IDHashedModel: Identifiable, Hashable, CustomStringConvertible {
    var id: Int
    var title: String
    var count: Int
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
    static func == (lhs: Self, rhs: Self) -> Bool { lhs.id == rhs.id && lhs.title == rhs.title && lhs.count == rhs.count }
    var description: String { "\(id):\(title):\(count)" }
}

/// Integer fields with the identity not first and two content fields.
struct WideRow: CustomStringConvertible {
    var tag: Int
    var id: Int
    var low: Int
    var high: Int
    var description: String { "\(id):\(low):\(high)" }
}

/// Two integer fields, the identity second: 16-byte rows whose keys are their second lanes.
struct TrailingIDRow: CustomStringConvertible {
    var content: Int
    var id: Int
    var description: String { "\(id):\(content)" }
}

@Suite struct DifferTests {
    /// Streams of snapshots: every update checks against the reference from the previous one.
    @Test(arguments: [(MoveMode.minimal, DifferState.previousSnapshot, 0), (.displaced, .hashesAndIdentities, 0),
                      (.none, .hashesOnly, 0), (.minimal, .hashesAndIdentities, 3), (.none, .previousSnapshot, 3)])
    func streamsReproduceEverySnapshot(mode: MoveMode, state: DifferState, weakBits: Int) {
        var generator = SeededGenerator(seed: 0xD1FF_E4 &+ UInt64(weakBits))
        for stream in 0..<300 {
            let differ = state.make(IdentifiableAdapter<TestRow>(), moves: mode, weakBits: weakBits)
            var previous: [TestRow] = []
            for step in 0..<12 {
                let next = step == 0 ? makeScenario(.random(using: &generator), using: &generator).old
                    : makeScenario(.random(using: &generator), using: &generator).new.enumerated().map { $0.offset % 3 == 0 ? $0.element : ($0.offset < previous.count ? previous[$0.offset] : $0.element) }
                let update = differ.diff(next)
                #expect(update.isInitial == (step == 0))
                let problems = checkChangeset(update.changeset, old: previous, new: next, mode: mode)
                if !problems.isEmpty {
                    Issue.record("stream \(stream) step \(step): \(problems.prefix(3))")
                    return
                }
                if state != .hashesOnly {
                    #expect(update.deletedIdentities == update.changeset.deletions.map { previous[$0].id })
                } else {
                    #expect(update.deletedIdentities == nil)
                }
                previous = next
            }
        }
    }

    /// The default differ gives the one-shot diff's answer on every update, for a model whose
    /// hash ignores the fields `==` compares; hash-only state misses those updates, as its
    /// documentation says.
    @Test(arguments: MoveMode.allCases)
    func differEqualsOneShotDiffWhenHashesIgnoreFields(mode: MoveMode) throws {
        var generator = SeededGenerator(seed: 0x51DE_5DE5)
        var missedByHashes = 0
        for _ in 0..<200 {
            let differ = Differ(keepingPreviousSnapshotOf: IdentifiableAdapter<IDHashedModel>(), moves: mode)
            let hashing = Differ(keepingOnlyHashesOf: IdentifiableAdapter<IDHashedModel>(), moves: mode)
            var previous: [IDHashedModel] = []
            for _ in 0..<8 {
                let size = Int.random(in: 0...40, using: &generator)
                let next = (0..<size).map { _ in
                    IDHashedModel(id: Int.random(in: 0..<30, using: &generator), title: ["a", "b"].randomElement(using: &generator)!,
                                  count: Int.random(in: 0..<2, using: &generator))
                }
                let update = differ.diff(next)
                let hashed = hashing.diff(next)
                let oneShot = try diff(previous, next, using: IdentifiableAdapter<IDHashedModel>(), options: DiffOptions(moves: mode))
                #expect(update.changeset == oneShot, "previous \(previous)\nnext \(next)")
                missedByHashes += oneShot.updates.count - hashed.changeset.updates.count
                previous = next
            }
        }
        #expect(missedByHashes > 0) // the pitfall the default avoids is real in this stream
    }

    /// `Identifiable & Equatable` rows that are not `Hashable` work with the default differ.
    @Test func equatableOnlyRows() {
        let differ = Differ(keepingPreviousSnapshotOf: IdentifiableAdapter<Car>())
        let first = differ.diff([Car(id: 1, color: "blue", mileage: 10)])
        let next = differ.diff([Car(id: 1, color: "blue", mileage: 12), Car(id: 2, color: "red", mileage: 0)])
        #expect(first.isInitial && first.changeset.insertions == [0])
        #expect(next.changeset == Changeset(oldCount: 1, newCount: 2, insertions: [1], updates: [IndexPair(old: 0, new: 0)]))
        #expect(differ.diff([Car]()).deletedIdentities == [1, 2])
    }

    @Test func initialResetAndKeptBytes() {
        let differ = Differ(keepingPreviousSnapshotOf: IdentifiableAdapter<TestRow>())
        let rows = [TestRow(id: 1, content: 0), TestRow(id: 2, content: 0)]
        #expect(differ.diff(rows) == DifferUpdate(changeset: Changeset(oldCount: 0, newCount: 2, insertions: [0, 1]), isInitial: true, deletedIdentities: []))
        #expect(!differ.diff(rows).changeset.hasChanges)
        #expect(differ.rowCount == 2 && differ.keptBytesPerRow > 8 + MemoryLayout<TestRow>.stride)
        differ.reset()
        #expect(differ.diff(rows).isInitial)
        #expect(Differ(keepingOnlyHashesOf: IdentifiableAdapter<TestRow>()).keptBytesPerRow == 16)
        #expect(Differ(keepingOnlyHashesOf: IdentifiableAdapter<TestRow>(), keepsIdentities: true).keptBytesPerRow == 24)
    }

    /// Strings (hashed identities) through every kind of differ.
    @Test(arguments: DifferState.allCases)
    func hashedIdentities(state: DifferState) {
        let differ = state.make(HashableAdapter<String>(), moves: .minimal)
        _ = differ.diff(["a", "b", "c"])
        let update = differ.diff(["c", "a", "d"])
        #expect(update.changeset.deletions == [1] && update.changeset.insertions == [2])
        #expect(update.deletedIdentities == (state == .hashesOnly ? nil : ["b"]))
    }
}

/// A row whose identity is a string: hashed identity keys, verified after pairing.
struct NamedRow: Hashable, CustomStringConvertible {
    var name: String
    var content: Int
    var description: String { "\(name):\(content)" }
}

/// Streams whose snapshots differ a little (the case the carried identity keys are for):
/// single and runs of deletions, fresh and repeated insertions, single and block moves,
/// updates. Every update equals the one-shot diff of the same two snapshots.
@Suite struct CarriedKeysTests {
    /// The next snapshot: a few changes of every kind to `rows`.
    static func evolve(_ rows: [TestRow], nextID: inout Int, using generator: inout SeededGenerator) -> [TestRow] {
        var next = rows
        func index(_ count: Int) -> Int { Int.random(in: 0..<Swift.max(count, 1), using: &generator) }
        for _ in 0..<Int.random(in: 0...3, using: &generator) where !next.isEmpty { next.remove(at: index(next.count)) }
        if Bool.random(using: &generator), next.count > 12 {
            let start = index(next.count - 11)
            next.removeSubrange(start..<(start + Int.random(in: 5...10, using: &generator)))
        }
        for _ in 0..<Int.random(in: 0...3, using: &generator) {
            nextID += 1
            next.insert(TestRow(id: nextID, content: 0), at: index(next.count + 1))
        }
        // Now and then a repeated identity (a deleted one, or one still there).
        if Int.random(in: 0..<25, using: &generator) == 0, let repeated = rows.randomElement(using: &generator) {
            next.insert(repeated, at: index(next.count + 1))
        }
        for _ in 0..<Int.random(in: 0...2, using: &generator) where next.count > 1 {
            let row = next.remove(at: index(next.count))
            next.insert(row, at: index(next.count + 1))
        }
        if Bool.random(using: &generator), next.count > 20 {
            let start = index(next.count - 8)
            let block = next[start..<(start + 8)]
            next.removeSubrange(start..<(start + 8))
            next.insert(contentsOf: block, at: index(next.count + 1))
        }
        for _ in 0..<Int.random(in: 0...3, using: &generator) where !next.isEmpty { next[index(next.count)].content += 1 }
        return next
    }

    /// Rows whose identity and content are integer fields, read through key paths: the
    /// differ reads and compares them where they lie, in one pass. Every update equals the
    /// one-shot diff's, whether the carried keys pair it or a repeated identity sends it
    /// down the usual path, with one content field or several, the identity not first (in
    /// 32-byte rows and in 16-byte rows, which the walk reads two to a pair of vectors).
    @Test(arguments: MoveMode.allCases)
    func integerFieldRowsEqualOneShotDiffs(mode: MoveMode) throws {
        var generator = SeededGenerator(seed: 0x1_4E_F1E1D)
        let singleAdapter = KeyPathAdapter(identity: \TestRow.id, content: \.content)
        let wideAdapter = KeyPathAdapter(identity: \WideRow.id, content: \.low, \.high)
        let trailingAdapter = KeyPathAdapter(identity: \TrailingIDRow.id, content: \.content)
        var carriedTotal = 0, updates = 0
        for _ in 0..<60 {
            let single = Differ(keepingPreviousSnapshotOf: singleAdapter, moves: mode)
            let wide = Differ(keepingPreviousSnapshotOf: wideAdapter, moves: mode)
            let trailing = Differ(keepingPreviousSnapshotOf: trailingAdapter, moves: mode)
            var nextID = 0
            var rows = (0..<120).map { _ in nextID += 1; return TestRow(id: nextID, content: 0) }
            var previous: [TestRow] = [], previousWide: [WideRow] = [], previousTrailing: [TrailingIDRow] = []
            for step in 0..<25 {
                if step > 0 { rows = Self.evolve(rows, nextID: &nextID, using: &generator) }
                if step % 6 == 5 {
                    // A stretch of rows reversed: one segment of the pairing a row.
                    let start = Int.random(in: 0..<Swift.max(rows.count - 40, 1), using: &generator)
                    rows[start..<Swift.min(start + Int.random(in: 2...40, using: &generator), rows.count)].reverse()
                }
                let update = single.diff(rows)
                let oneShot = try diff(previous, rows, using: singleAdapter, options: DiffOptions(moves: mode))
                #expect(update.changeset == oneShot, "step \(step)\nold \(previous)\nnew \(rows)")
                #expect(checkChangeset(update.changeset, old: previous, new: rows, mode: mode).isEmpty)
                #expect(update.deletedIdentities == update.changeset.deletions.map { previous[$0].id })
                // A content change lands in one field or the other; the tag, outside the
                // contents, changes in a fifth of the rows each step, and is no update.
                let wideRows = rows.map { WideRow(tag: $0.id % 5 == step % 5 ? step : 0, id: $0.id, low: $0.content & 1, high: $0.content >> 1) }
                let wideOneShot = try diff(previousWide, wideRows, using: wideAdapter, options: DiffOptions(moves: mode))
                #expect(wide.diff(wideRows).changeset == wideOneShot, "step \(step)")
                let trailingRows = rows.map { TrailingIDRow(content: $0.content, id: $0.id) }
                let trailingOneShot = try diff(previousTrailing, trailingRows, using: trailingAdapter, options: DiffOptions(moves: mode))
                #expect(trailing.diff(trailingRows).changeset == trailingOneShot, "step \(step)")
                previous = rows
                previousWide = wideRows
                previousTrailing = trailingRows
                updates += step > 0 ? 1 : 0
            }
            carriedTotal += single.carriedPairings
            #expect(wide.carriedPairings == single.carriedPairings)
            #expect(trailing.carriedPairings == single.carriedPairings)
        }
        #expect(carriedTotal * 2 > updates, "\(carriedTotal) of \(updates) updates paired from carried keys")
    }

    /// Rows that keep their identities and their order. When only contents change, a
    /// differ that keeps the snapshot compares the rows in place; when a row also comes or
    /// goes at the end, the walk pairs all the others in its common prefix, a block of rows
    /// at a time, comparing contents as it goes (hash-only state always walks). Sizes around
    /// the block's 16 rows, changes at the first and last rows and anywhere between: every
    /// update equals the one-shot diff's, with the changed rows as its updates. Key paths
    /// to integer fields compare the rows in place as bits; key paths to a `String` id and
    /// an `Int` compare them field by field where they lie; `Identifiable` through `==`.
    @Test(arguments: [1, 15, 16, 17, 47, 64, 300])
    func rowsThatKeepTheirOrder(count: Int) throws {
        struct Named: Equatable { var name: String; var content: Int }
        let namedPaths = KeyPathAdapter(identity: \Named.name, content: \.content)
        let named = Differ(keepingPreviousSnapshotOf: namedPaths)
        var generator = SeededGenerator(seed: 0xC0_47E7 &+ UInt64(count))
        let keyPaths = KeyPathAdapter(identity: \TestRow.id, content: \.content)
        let fields = Differ(keepingPreviousSnapshotOf: keyPaths)
        let models = Differ(keepingPreviousSnapshotOf: IdentifiableAdapter<TestRow>())
        let hashes = Differ(keepingOnlyHashesOf: keyPaths)
        let wide = Differ(keepingPreviousSnapshotOf: KeyPathAdapter(identity: \WideRow.id, content: \.low, \.high))
        var rows = (0..<count).map { TestRow(id: 7 * $0 + 3, content: 0) }
        var previous: [TestRow] = []
        var walked = 0
        for step in 0..<40 {
            var changed = Set<Int>()
            if step > 0 {
                // The first or last row now and then, plus a few anywhere (none on step 5).
                if step % 4 == 1 { changed.insert(0) }
                if step % 4 == 2 { changed.insert(rows.count - 1) }
                if step != 5 {
                    for _ in 0..<Int.random(in: 0...3, using: &generator) { changed.insert(Int.random(in: 0..<rows.count, using: &generator)) }
                }
                for index in changed { rows[index].content += 1 }
            }
            // Every third step a row comes at the end, or the last one goes.
            let ends = step > 0 && step % 3 == 0
            if ends {
                if step % 2 == 0 || rows.count < 2 {
                    rows.append(TestRow(id: -step, content: 0))
                } else {
                    changed.remove(rows.count - 1)
                    rows.removeLast()
                }
            }
            let oneShot = try diff(previous, rows, using: keyPaths)
            for update in [fields.diff(rows), models.diff(rows), hashes.diff(rows)] {
                #expect(update.changeset == oneShot, "step \(step)")
            }
            #expect(named.diff(rows.map { Named(name: "row \($0.id)", content: $0.content) }).changeset == oneShot, "step \(step)")
            // Two integer fields: a change lands in the second, and every other one in the first too.
            #expect(wide.diff(rows.map { WideRow(tag: $0.id % 7, id: $0.id, low: $0.content >> 1, high: $0.content & 1) }).changeset == oneShot,
                    "step \(step)")
            if step > 0 {
                #expect(oneShot.updates.map(\.new) == changed.sorted())
                #expect(oneShot.moves.isEmpty && oneShot.deletions.count + oneShot.insertions.count == (ends ? 1 : 0))
                walked += 1
                // Every row kept its place (or one came or went at the end): the walk pairs
                // them all in place, without their keys; over keys only, up to the first
                // changed row.
                let inPlace = Swift.min(previous.count, rows.count)
                #expect(fields.lastKeptKeys == inPlace && models.lastKeptKeys == inPlace && wide.lastKeptKeys == inPlace,
                        "step \(step)")
                let equal = zip(previous, rows).prefix { $0 == $1 }.count
                #expect(named.lastKeptKeys == (named.pairingWays["keys walk", default: 0] > 0 ? equal : inPlace), "step \(step)")
            }
            previous = rows
        }
        // Every diff after the first pairs from the carried keys, in the one walk.
        for differ in [fields.carriedPairings, models.carriedPairings, named.carriedPairings, wide.carriedPairings,
                       hashes.carriedPairings] {
            #expect(differ == walked)
        }
        #expect(fields.pairingWays == ["fields walk": walked] && models.pairingWays == ["bytes walk": walked])
    }

    /// Rows appended, removed or changed only near the end (a chat, a log, a feed that grows
    /// at the bottom): the walk pairs the leading rows in place, keeping their keys, and
    /// walks only the rest. Streams with repeated identities, under every move mode and
    /// weakened keys: every update equals the one-shot diff's and passes the checks, and
    /// every diff the walk pairs keeps exactly the rows with the previous identities at
    /// their indices from the first on (over keys only, the rows equal to the previous).
    @Test(arguments: [(MoveMode.minimal, 0), (.displaced, 0), (.none, 0), (.minimal, 4), (.displaced, 6)])
    func rowsChangedNearTheEnd(mode: MoveMode, weakBits: Int) throws {
        struct Named: Equatable { var name: String; var content: Int }
        var generator = SeededGenerator(seed: 0x7A_11 &+ UInt64(weakBits) &* 31 &+ UInt64(MoveMode.allCases.firstIndex(of: mode)!))
        let keyPaths = KeyPathAdapter(identity: \TestRow.id, content: \.content)
        let namedPaths = KeyPathAdapter(identity: \Named.name, content: \.content)
        var keptChecked = 0
        for _ in 0..<12 {
            let fields = TestDiffer.snapshot(keyPaths, moves: mode, weakBits: weakBits)
            let models = TestDiffer.snapshot(IdentifiableAdapter<TestRow>(), moves: mode, weakBits: weakBits)
            let named = TestDiffer.snapshot(namedPaths, moves: mode, weakBits: weakBits)
            var nextID = 0
            // Ids from a small range now and then: repeated identities, in the prefix and after it.
            func newRow() -> TestRow {
                nextID += 1
                return TestRow(id: Int.random(in: 0..<8, using: &generator) == 0 ? Int.random(in: 1...20, using: &generator) : nextID + 20,
                               content: Int.random(in: 0..<3, using: &generator))
            }
            var rows = (0..<Int.random(in: 1...200, using: &generator)).map { _ in newRow() }
            var previous: [TestRow] = []
            for step in 0..<30 {
                if step > 0 {
                    let tail = Int.random(in: 0...Swift.max(1, rows.count / 3), using: &generator)
                    let start = Swift.max(0, rows.count - tail)
                    switch Int.random(in: 0..<7, using: &generator) {
                    case 0: rows += (0..<Int.random(in: 1...20, using: &generator)).map { _ in newRow() }
                    case 1: rows.removeLast(Swift.min(rows.count, Int.random(in: 1...5, using: &generator)))
                    case 2: if !rows.isEmpty { rows[rows.count - 1] = newRow() }
                    case 3: for index in start..<rows.count where Bool.random(using: &generator) { rows[index].content += 1 }
                    case 4:
                        if start < rows.count {
                            let moved = rows.remove(at: Int.random(in: start..<rows.count, using: &generator))
                            rows.insert(moved, at: Int.random(in: start...rows.count, using: &generator))
                        }
                    case 5: rows.insert(newRow(), at: Int.random(in: start...rows.count, using: &generator))
                    default: if !rows.isEmpty { rows[Int.random(in: 0..<rows.count, using: &generator)].content += 1 }
                    }
                }
                let oneShot = try diff(previous, rows, using: keyPaths, options: DiffOptions(moves: mode))
                let carriedBefore = (fields.carriedPairings, models.carriedPairings, named.carriedPairings)
                for update in [fields.diff(rows), models.diff(rows)] {
                    #expect(update.changeset == oneShot, "step \(step)\nold \(previous)\nnew \(rows)")
                    #expect(update.deletedIdentities == oneShot.deletions.map { previous[$0].id })
                }
                let namedRows = rows.map { Named(name: "row \($0.id)", content: $0.content) }
                #expect(named.diff(namedRows).changeset == oneShot)
                let problems = checkChangeset(oneShot, old: previous, new: rows, mode: mode)
                #expect(problems.isEmpty, "\(problems.prefix(3))")
                if step > 0 {
                    let comment: Comment = "step \(step)\nold \(previous)\nnew \(rows)"
                    for (differ, before) in [(fields, carriedBefore.0), (models, carriedBefore.1)] {
                        if differ.expectKeptPrefix(previous, rows, carriedBefore: before, identity: \.id, equal: ==, comment),
                           differ.lastKeptKeys > 0 {
                            keptChecked += 1
                        }
                    }
                    let namedPrevious = previous.map { Named(name: "row \($0.id)", content: $0.content) }
                    _ = named.expectKeptPrefix(namedPrevious, namedRows, carriedBefore: carriedBefore.2, identity: \.name,
                                               equal: ==, comment)
                }
                previous = rows
            }
        }
        // Repeated identities leave many diffs to indexing; enough are walked to tell.
        #expect(keptChecked >= 8)
    }

    /// Integer identities with contents only the adapter can compare (a `String` field, a
    /// model's own `==`): the carried keys pair the rows, the adapter compares them. On
    /// snapshots of 300 rows every update equals the one-shot diff's, and an update that only
    /// a field `hash(into:)` ignores changed is still found.
    @Test(arguments: MoveMode.allCases)
    func rowsReadThroughTheAdapterEqualOneShotDiffs(mode: MoveMode) throws {
        // The seed must not come from `mode.hashValue`: that is seeded anew in every process.
        var generator = SeededGenerator(seed: 0x2EAD_E2 &+ UInt64(MoveMode.allCases.firstIndex(of: mode)!))
        let modelAdapter = IdentifiableAdapter<IDHashedModel>()
        let titleAdapter = KeyPathAdapter(identity: \IDHashedModel.id, content: \.title)
        var carriedTotal = 0, updates = 0, titleUpdates = 0
        for _ in 0..<12 {
            let models = Differ(keepingPreviousSnapshotOf: modelAdapter, moves: mode)
            let titles = Differ(keepingPreviousSnapshotOf: titleAdapter, moves: mode)
            var nextID = 0
            var rows = (0..<300).map { _ in nextID += 1; return TestRow(id: nextID, content: 0) }
            var previous: [IDHashedModel] = []
            for step in 0..<25 {
                if step > 0 { rows = Self.evolve(rows, nextID: &nextID, using: &generator) }
                // Content changes land in the title (odd contents) or the count.
                let next = rows.map { IDHashedModel(id: $0.id, title: "t\($0.content / 2 + $0.content % 2)", count: $0.content / 2) }
                let update = models.diff(next)
                let oneShot = try diff(previous, next, using: modelAdapter, options: DiffOptions(moves: mode))
                #expect(update.changeset == oneShot, "step \(step)")
                #expect(checkChangeset(update.changeset, old: previous, new: next, mode: mode).isEmpty)
                #expect(update.deletedIdentities == update.changeset.deletions.map { previous[$0].id })
                let titleUpdate = titles.diff(next)
                #expect(titleUpdate.changeset == (try diff(previous, next, using: titleAdapter, options: DiffOptions(moves: mode))))
                previous = next
                updates += step > 0 ? 1 : 0
                titleUpdates += titleUpdate.changeset.updates.count
            }
            carriedTotal += models.carriedPairings
            #expect(titles.carriedPairings == models.carriedPairings)
        }
        #expect(titleUpdates > 0)
        // A repeated identity lives long among 300 rows, and while it does the updates pair
        // by the identity table: over 256 seeds at least 38% of updates paired from carried keys.
        #expect(carriedTotal * 3 > updates, "\(carriedTotal) of \(updates) updates paired from carried keys")
    }

    @Test(arguments: [(MoveMode.minimal, DifferState.previousSnapshot, 0), (.displaced, .previousSnapshot, 0),
                      (.none, .previousSnapshot, 0), (.minimal, .hashesOnly, 0), (.minimal, .hashesAndIdentities, 0),
                      (.minimal, .previousSnapshot, 10), (.none, .hashesAndIdentities, 10)])
    func smallChangesEqualOneShotDiffs(mode: MoveMode, state: DifferState, weakBits: Int) throws {
        var generator = SeededGenerator(seed: 0xCA_44_1ED &+ UInt64(weakBits))
        var carriedTotal = 0, updates = 0
        for _ in 0..<60 {
            let differ = state.make(IdentifiableAdapter<TestRow>(), moves: mode, weakBits: weakBits)
            var nextID = 0
            var rows = (0..<(weakBits == 0 ? 120 : 24)).map { _ in nextID += 1; return TestRow(id: nextID, content: 0) }
            var previous: [TestRow] = []
            for step in 0..<25 {
                if step > 0 { rows = Self.evolve(rows, nextID: &nextID, using: &generator) }
                let update = differ.diff(rows)
                let oneShot = try diff(previous, rows, using: IdentifiableAdapter<TestRow>(), options: DiffOptions(moves: mode))
                #expect(update.changeset == oneShot, "step \(step)\nold \(previous)\nnew \(rows)")
                let problems = checkChangeset(update.changeset, old: previous, new: rows, mode: mode)
                #expect(problems.isEmpty, "\(problems.prefix(3))")
                if state != .hashesOnly {
                    #expect(update.deletedIdentities == update.changeset.deletions.map { previous[$0].id })
                }
                previous = rows
                updates += step > 0 ? 1 : 0
            }
            carriedTotal += differ.carriedPairings
        }
        // Most updates pair from the carried keys (the others follow a repeated identity).
        #expect(carriedTotal * 2 > updates, "\(carriedTotal) of \(updates) updates paired from carried keys")
    }

    /// `Identifiable` rows with hashed (`String`) ids: the carried keys pair the rows, every
    /// pair's ids are checked a run of rows at a time, and `==` then compares the runs. Every
    /// update equals the one-shot diff's.
    @Test func hashedIdentifiableIDsEqualOneShotDiffs() throws {
        struct Titled: Identifiable, Equatable { var id: String; var count: Int }
        var generator = SeededGenerator(seed: 0x5_71D5)
        let adapter = IdentifiableAdapter<Titled>()
        var carriedTotal = 0, updates = 0, found = 0
        for _ in 0..<20 {
            let differ = Differ(keepingPreviousSnapshotOf: adapter)
            var nextID = 0
            var rows = (0..<150).map { _ in nextID += 1; return TestRow(id: nextID, content: 0) }
            var previous: [Titled] = []
            for step in 0..<20 {
                if step > 0 { rows = Self.evolve(rows, nextID: &nextID, using: &generator) }
                let next = rows.map { Titled(id: "row-\($0.id)", count: $0.content) }
                let update = differ.diff(next)
                #expect(update.changeset == (try diff(previous, next, using: adapter)), "step \(step)")
                found += update.changeset.updates.count
                previous = next
                updates += step > 0 ? 1 : 0
            }
            carriedTotal += differ.carriedPairings
        }
        #expect(found > 0)
        #expect(carriedTotal * 2 > updates, "\(carriedTotal) of \(updates) updates paired from carried keys")
    }

    /// Hashed identities: pairs from the carried keys are verified, also under weakened keys.
    @Test(arguments: [0, 6])
    func stringIdentities(weakBits: Int) throws {
        var generator = SeededGenerator(seed: 0x57_1D &+ UInt64(weakBits))
        let adapter = KeyPathAdapter(identity: \NamedRow.name, content: \.content)
        let differ = TestDiffer.snapshot(adapter, moves: .minimal, weakBits: weakBits)
        var nextID = 0
        var rows = (0..<40).map { _ in nextID += 1; return TestRow(id: nextID, content: 0) }
        var previous: [NamedRow] = []
        for _ in 0..<300 {
            rows = Self.evolve(rows, nextID: &nextID, using: &generator)
            let named = rows.map { NamedRow(name: "row \($0.id)", content: $0.content) }
            let update = differ.diff(named)
            #expect(update.changeset == (try diff(previous, named, using: adapter)))
            previous = named
        }
        #expect(differ.carriedPairings > (weakBits == 0 ? 150 : 10))
    }

    /// A carried pairing of two identities under one full key (a 64-bit collision, made here
    /// by keys of six bits) is caught while the updates are compared, and the diff falls back:
    /// through the adapter, and where rows are compared as bytes first (`valueRows`), among
    /// the rows whose bytes changed.
    @Test(arguments: [false, true])
    func collidingKeysInCarriedPairingFallBack(valueRows: Bool) throws {
        if valueRows {
            try collidingKeysFallBack(LowBitsValueKeyAdapter(bits: 6))
        } else {
            try collidingKeysFallBack(LowBitsKeyAdapter(bits: 6))
        }
    }

    func collidingKeysFallBack<Adapter: IdentifyingAdapter>(_ adapter: Adapter) throws where Adapter.Row == TestRow {
        var generator = SeededGenerator(seed: 0xC0_11DE)
        let differ = Differ(keepingPreviousSnapshotOf: adapter)
        // 48 rows on 48 of the 64 keys; a swap gives a row another identity on its own key.
        var rows = (0..<48).map { TestRow(id: $0, content: 0) }
        var previous: [TestRow] = []
        var swaps = 0
        for step in 0..<300 {
            if step > 0 {
                if step % 3 == 0 {
                    rows[Int.random(in: 0..<rows.count, using: &generator)].id ^= 64
                    swaps += 1
                }
                let moved = rows.remove(at: Int.random(in: 0..<rows.count, using: &generator))
                rows.insert(moved, at: Int.random(in: 0...rows.count, using: &generator))
                rows[Int.random(in: 0..<rows.count, using: &generator)].content += 1
            }
            let update = differ.diff(rows)
            #expect(update.changeset == (try diff(previous, rows, using: adapter)), "step \(step)")
            previous = rows
        }
        #expect(differ.carriedPairings > 150)
        #expect(differ.carriedPairings <= 299 - swaps, "every diff with a swap fell back")
    }

    /// Rows compared as bytes first: a row unequal to itself (a `Double` field holding NaN)
    /// is an update whenever it is paired, as a one-shot diff reports it, though its bytes
    /// did not change; the flag passes from row to row as blocks of unchanged rows pair
    /// whole. Rows with padding (after the `Bool`) compare as the adapter says.
    @Test(arguments: MoveMode.allCases)
    func rowsUnequalToThemselvesAreUpdated(mode: MoveMode) throws {
        struct Reading: Identifiable, Equatable { var id: Int; var on: Bool; var value: Double }
        var generator = SeededGenerator(seed: 0x7A_7 &+ UInt64(MoveMode.allCases.firstIndex(of: mode)!))
        let adapter = IdentifiableAdapter<Reading>()
        let differ = Differ(keepingPreviousSnapshotOf: adapter, moves: mode)
        var nextID = 0
        var rows = (0..<400).map { _ in nextID += 1; return TestRow(id: nextID, content: 0) }
        var previous: [Reading] = []
        var unchangedNaNUpdates = 0
        for step in 0..<40 {
            if step > 0 {
                // Without repeated identities, so that every update pairs from the carried keys.
                var seen = Set<Int>()
                rows = Self.evolve(rows, nextID: &nextID, using: &generator).filter { seen.insert($0.id).inserted }
            }
            let next = rows.map { Reading(id: $0.id, on: $0.content % 2 == 0, value: $0.id % 13 == 0 ? .nan : Double($0.content)) }
            let update = differ.diff(next)
            #expect(update.changeset == (try diff(previous, next, using: adapter, options: DiffOptions(moves: mode))), "step \(step)")
            #expect(checkChangeset(update.changeset, old: previous, new: next, mode: mode).isEmpty)
            unchangedNaNUpdates += update.changeset.updates.count { pair in
                next[pair.new].value.isNaN && previous[pair.old].on == next[pair.new].on
            }
            previous = next
        }
        #expect(unchangedNaNUpdates > 100)
        #expect(differ.carriedPairings == 39)
    }

    /// Rows compared as bytes whose identity is unequal to itself (a `Double` identity
    /// holding NaN) never pair, as in a one-shot diff, though their bytes did not change:
    /// through a key path to the identity and as whole `Hashable` values. NaNs of distinct
    /// payloads have distinct keys, so the carried set is usable and the bytes walk meets
    /// them; the identity check of its candidates sends those diffs to the passes.
    @Test func identitiesUnequalToThemselvesNeverPair() throws {
        struct Scored: Equatable { var score: Double; var name: Int }
        var generator = SeededGenerator(seed: 0x5C_0AE)
        let scores = KeyPathAdapter(identity: \Scored.score, content: \.name), values = HashableAdapter<Double>()
        let scored = Differ(keepingPreviousSnapshotOf: scores), valued = Differ(keepingPreviousSnapshotOf: values)
        var nextID = 0
        var rows = (0..<300).map { _ in nextID += 1; return TestRow(id: nextID, content: 0) }
        var previousScored: [Scored] = [], previousValues: [Double] = []
        var unpairedNaNs = 0
        for step in 0..<30 {
            if step > 0 {
                var seen = Set<Int>()
                rows = Self.evolve(rows, nextID: &nextID, using: &generator).filter { seen.insert($0.id).inserted }
            }
            // NaNs of distinct payloads: distinct keys, so the carried set can pair the rows.
            func score(_ row: TestRow) -> Double { row.id % 11 == 0 ? Double(nan: UInt64(row.id), signaling: false) : Double(row.id) }
            let nextScored = rows.map { Scored(score: score($0), name: $0.content) }
            let nextValues = rows.map { score($0) + Double($0.content) / 1_000 }
            let scoredUpdate = scored.diff(nextScored), valuedUpdate = valued.diff(nextValues)
            #expect(scoredUpdate.changeset == (try diff(previousScored, nextScored, using: scores)), "step \(step)")
            #expect(valuedUpdate.changeset == (try diff(previousValues, nextValues, using: values)), "step \(step)")
            unpairedNaNs += valuedUpdate.changeset.insertions.count { nextValues[$0].isNaN }
            previousScored = nextScored
            previousValues = nextValues
        }
        #expect(unpairedNaNs > 100)
    }

    /// Rows appended in small steps: the walk keeps the leading rows' keys where they are,
    /// until the carried set outgrows its capacity and is rebuilt from the kept
    /// keys. The rows at the front changed just before, so keys the differ held earlier
    /// would name other rows: the next diff, which moves the front's rows to the end, finds
    /// them only through the rebuilt set, and must answer as a one-shot diff does.
    @Test func setRebuiltAfterAppends() throws {
        let adapter = IdentifiableAdapter<TestRow>()
        let differ = Differ(keepingPreviousSnapshotOf: adapter)
        var rows = (1...200).map { TestRow(id: $0, content: 0) }, previous: [TestRow] = []
        func step() throws {
            let update = differ.diff(rows)
            #expect(try update.changeset == diff(previous, rows, using: adapter))
            #expect(update.deletedIdentities == update.changeset.deletions.map { previous[$0].id })
            previous = rows
        }
        try step()
        rows.replaceSubrange(0..<10, with: (1001...1010).map { TestRow(id: $0, content: 1) })
        try step()
        var nextID = 2000
        for _ in 0..<8 {
            rows += (0..<rows.count / 9).map { _ in nextID += 1; return TestRow(id: nextID, content: 0) }
            let kept = previous.count
            try step()
            #expect(differ.lastKeptKeys == kept, "the rows before the appended ones keep their keys")
        }
        #expect(rows.count > 2 * 200)
        let carried = differ.carriedPairings
        rows = Array(rows[10...]) + rows[0..<10].reversed()
        try step()
        #expect(differ.carriedPairings == carried + 1, "paired from the rebuilt set")
    }

    /// Rows that keep repeating identities never pair from carried keys and stay exact.
    @Test func repeatedIdentitiesFallBack() throws {
        let differ = Differ(keepingPreviousSnapshotOf: IdentifiableAdapter<TestRow>())
        var generator = SeededGenerator(seed: 0xD0_0B1E)
        var previous: [TestRow] = []
        for _ in 0..<100 {
            let rows = (0..<50).map { _ in TestRow(id: Int.random(in: 0..<20, using: &generator), content: Int.random(in: 0..<2, using: &generator)) }
            #expect(differ.diff(rows).changeset == (try diff(previous, rows)))
            previous = rows
        }
        #expect(differ.carriedPairings == 0)
    }
}
