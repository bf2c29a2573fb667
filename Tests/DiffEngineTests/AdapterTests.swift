import DiffEngine
import DiffEngineTestSupport
import Foundation
import Testing

struct Product: Equatable {
    var sku: String
    var title: String
    var price: Double
    var stock: Int
}


struct CountingAdapter: RowAdapter {
    let counter: CallCounter
    func identityKey(of row: TestRow) -> UInt64 {
        counter.countKey()
        return row.id.stableHash &* 0x9e37_79b9_7f4a_7c15 // a hash, not exact
    }
    func identitiesEqual(_ lhs: TestRow, _ rhs: TestRow) -> Bool {
        counter.countIdentityComparison()
        return lhs.id == rhs.id
    }
    func contentsEqual(_ lhs: TestRow, _ rhs: TestRow) -> Bool {
        counter.countContentComparison()
        return lhs.content == rhs.content
    }
    func contentHash(of row: TestRow) -> UInt64 { UInt64(row.content) }
}

/// The README's plugin example, as printed there.
struct CaseInsensitiveNames: RowAdapter {
    func identityKey(of row: String) -> UInt64 { row.lowercased().stableHash }
    func identitiesEqual(_ a: String, _ b: String) -> Bool { a.lowercased() == b.lowercased() }
    func contentsEqual(_ a: String, _ b: String) -> Bool { a == b }   // a case change is an update
    func contentHash(of row: String) -> UInt64 { row.stableHash }
}

@Suite struct AdapterTests {
    @Test func readmePluginExample() throws {
        let changes = try diff(["Ann", "bob"], ["ann", "Bob", "cy"], using: CaseInsensitiveNames())
        #expect(changes == Changeset(oldCount: 2, newCount: 3, insertions: [2],
                                     updates: [IndexPair(old: 0, new: 0), IndexPair(old: 1, new: 1)]))
    }

    @Test func keyPathsPickIdentityAndContentFields() throws {
        let old = [Product(sku: "a", title: "Apple", price: 1, stock: 5), Product(sku: "b", title: "Pear", price: 2, stock: 1)]
        var new = old
        new[0].stock = 0 // not a content field: no update
        new[1].price = 3 // a content field: an update
        let changes = try diff(old, new, identity: \.sku, content: \.title, \.price)
        #expect(changes.updates == [IndexPair(old: 1, new: 1)])
        #expect(changes.hasChanges)
        #expect(checkChangeset(changes, old: old, new: new, mode: .minimal,
                               sameIdentity: { $0.sku == $1.sku },
                               sameContent: { $0.title == $1.title && $0.price == $1.price }).isEmpty)
    }

    @Test func textLinesAndByteRows() throws {
        let old = ["alpha", "beta", "gamma", "beta"], new = ["beta", "alpha", "delta", "beta"]
        let lines = try diff(old, new)
        #expect(checkChangeset(lines, old: old, new: new, mode: .minimal, sameIdentity: ==, sameContent: ==).isEmpty)
        let bytes = try diff(old.map { Array($0.utf8) }, new.map { Array($0.utf8) })
        #expect(bytes == lines)
    }

    /// Text is compared as exact UTF-8 bytes: no Unicode normalization.
    @Test func noUnicodeNormalization() throws {
        let composed = "\u{e9}", decomposed = "e\u{301}"
        #expect(composed == decomposed) // Swift's String equality is canonical equivalence
        #expect(composed.stableHash != decomposed.stableHash)
        let changes = try diff([composed.utf8.map { $0 }], [decomposed.utf8.map { $0 }])
        #expect(changes.deletions == [0] && changes.insertions == [0])
    }

    @Test func uuidIdentities() throws {
        var generator = SeededGenerator(seed: 5)
        // Random UUIDs drawn from the seeded generator, so every run diffs the same ones.
        let ids = (0..<200).map { _ in
            withUnsafeBytes(of: (generator.next(), generator.next())) { UUID(uuid: $0.load(as: uuid_t.self)) }
        }
        let old = ids
        var new = Array(ids.dropFirst(20))
        new.shuffle(using: &generator)
        let changes = try diff(old, new)
        #expect(changes.deletions.count == 20)
        #expect(checkChangeset(changes, old: old, new: new, mode: .minimal, sameIdentity: ==, sameContent: ==).isEmpty)
    }

    /// A plugin adapter defined here, outside the engine module.
    @Test func customAdapterWorkIsLinear() throws {
        var generator = SeededGenerator(seed: 11)
        for size in [1_000, 4_000, 16_000] {
            let shape = ScenarioShape(size: size, alphabet: size / 4, deleteRate: 0.1, insertRate: 0.1, moveRate: 0.05, updateRate: 0.05)
            let (old, new) = makeScenario(shape, using: &generator)
            let counter = CallCounter()
            let changes = try diff(old, new, using: CountingAdapter(counter: counter))
            let rows = old.count + new.count
            let paired = new.count - changes.insertions.count
            #expect(counter.keys <= rows)
            #expect(counter.identityComparisons <= paired + Swift.min(old.count, new.count) + 1)
            #expect(counter.contentComparisons <= paired + 1)
            #expect(checkChangeset(changes, old: old, new: new, mode: .minimal).isEmpty)
        }
    }

    @Test func collectionDifferenceAppliesToNew() throws {
        var generator = SeededGenerator(seed: 21)
        for _ in 0..<2_000 {
            let (old, new) = makeScenario(.random(using: &generator), using: &generator)
            for mode in MoveMode.allCases {
                let changes = try diff(old, new, options: DiffOptions(moves: mode))
                #expect(old.applying(changes.collectionDifference(from: old, to: new)) == new)
            }
        }
    }

    @Test func changesetJSONShape() throws {
        let changes = Changeset(oldCount: 3, newCount: 2, deletions: [0], insertions: [],
                                updates: [IndexPair(old: 2, new: 1)], moves: [IndexPair(old: 1, new: 0)])
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(changes), as: UTF8.self)
        #expect(json == #"{"deletions":[0],"insertions":[],"moves":[[1,0]],"newCount":2,"oldCount":3,"updates":[[2,1]]}"#)
        #expect(try JSONDecoder().decode(Changeset.self, from: Data(json.utf8)) == changes)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(IndexPair.self, from: Data("[1,2,3]".utf8))
        }
    }

    @Test func rejectNamesIdentityAndBothIndexes() {
        let old = [TestRow(id: 1, content: 0), TestRow(id: 2, content: 0), TestRow(id: 1, content: 0)]
        #expect(throws: DuplicateIdentityError(side: .old, identity: "1", firstIndex: 0, secondIndex: 2)) {
            try diff(old, [], options: DiffOptions(duplicates: .reject))
        }
        #expect(throws: DuplicateIdentityError(side: .new, identity: "2", firstIndex: 1, secondIndex: 3)) {
            try diff([], [TestRow(id: 4, content: 0), TestRow(id: 2, content: 0), TestRow(id: 3, content: 0), TestRow(id: 2, content: 1)],
                     options: DiffOptions(duplicates: .reject))
        }
    }
}

/// Stable keys are chosen by the key type, not by which overload the caller reached: a
/// generic function gets exact `Int` keys and stable `String` hashes as a concrete one does.
@Suite struct KeyChoiceTests {
    func adapter<T: Identifiable & Hashable>(for _: T.Type) -> IdentifiableAdapter<T> { IdentifiableAdapter<T>() }

    @Test func genericCallersGetStableKeys() {
        struct Named: Identifiable, Hashable { var id: String }
        #expect(adapter(for: TestRow.self).identityKeysAreExact)
        #expect(adapter(for: TestRow.self).identityKey(of: TestRow(id: 42, content: 0)) == 42)
        #expect(adapter(for: Named.self).identityKey(of: Named(id: "a")) == "a".stableHash)
        #expect(!adapter(for: Named.self).identityKeysAreExact)
        #expect(HashableAdapter<String>().identityKey(of: "a") == "a".stableHash)
        #expect(HashableAdapter<Int>().identityKeysAreExact)
        #expect(KeyPathAdapter(identity: \TestRow.id, content: \.content).identityKeysAreExact)
    }

    /// `writeIdentityKeys`, which picks its key function once for all rows, writes the key
    /// `identityKey(of:)` gives each row: for ids the core reads directly (integers, strings,
    /// UUIDs), a `StableHashable` type it does not know, and a type only `Hashable`.
    @Test func bulkKeysEqualEachRowsKey() {
        struct Coded: StableHashable { var code: UInt16; var stableHash: UInt64 { UInt64(code) &* 0x9E37_79B9 } }
        struct Plain: Hashable { var name: String }
        struct Model<ID: Hashable>: Identifiable, Equatable { var id: ID }
        func check<ID: Hashable>(_ ids: [ID], stable: Bool) {
            let rows = ids.map { Model(id: $0) }, adapter = IdentifiableAdapter<Model<ID>>()
            var keys = [UInt64](repeating: 0, count: rows.count)
            rows.withUnsafeBufferPointer { rows in keys.withUnsafeMutableBufferPointer { adapter.writeIdentityKeys(of: rows, to: $0) } }
            #expect(keys == rows.map(adapter.identityKey(of:)), "\(ID.self)")
            if stable { #expect(keys == ids.map { ($0 as! any StableHashable).stableHash }, "\(ID.self)") }
        }
        var generator = SeededGenerator(seed: 0xB01C)
        check((0..<100).map { _ in Int.random(in: .min ... .max, using: &generator) }, stable: true)
        check((0..<100).map { _ in Int32.random(in: .min ... .max, using: &generator) }, stable: true)
        check((0..<100).map { "row \($0)" }, stable: true)
        check((0..<100).map { _ in withUnsafeBytes(of: (generator.next(), generator.next())) { UUID(uuid: $0.load(as: uuid_t.self)) } }, stable: true)
        check((0..<100).map { Coded(code: UInt16($0)) }, stable: true)
        check((0..<100).map { Plain(name: "row \($0)") }, stable: false)
        check([Int](), stable: true)
    }
}

/// A row whose stored integer fields the key-path adapter reads as raw bits, and the same
/// fields as computed properties, which it must read through the generic path.
struct IntegerFields {
    var id: Int
    var value: Int
    var other: UInt64
    var id2: Int { id }
    var value2: Int { value }
    var other2: UInt64 { other }
}

@Suite struct RawKeyPathTests {
    /// Raw loads for the common prefix and the updates pass the Correctness rules against the
    /// naive reference and answer exactly what the generic path answers, on random lists with
    /// repeated ids, updates, moves and equal prefixes.
    @Test func rawBitsAgreeWithTheGenericPath() throws {
        var generator = SeededGenerator(seed: 0xB175)
        for _ in 0..<3_000 {
            let count = Int.random(in: 0...60, using: &generator)
            let alphabet = Int.random(in: 1...80, using: &generator)
            let old = (0..<count).map { _ in
                IntegerFields(id: Int.random(in: -alphabet...alphabet, using: &generator), value: Int.random(in: 0...2, using: &generator),
                              other: UInt64.random(in: 0...1, using: &generator) << 63)
            }
            var new = Array(old.prefix(Int.random(in: 0...count, using: &generator)))
            for row in old.dropFirst(new.count) where Int.random(in: 0..<5, using: &generator) > 0 {
                var changed = row
                if Int.random(in: 0..<4, using: &generator) == 0 { changed.value += 1 }
                if Int.random(in: 0..<6, using: &generator) == 0 { changed.other ^= 1 << 63 }
                new.insert(changed, at: Int.random(in: min(new.count, count / 2)...new.count, using: &generator))
            }
            for mode in [MoveMode.minimal, .displaced, .none] {
                let options = DiffOptions(moves: mode)
                let raw = try diff(old, new, identity: \.id, content: \.value, options: options)
                #expect(checkChangeset(raw, old: old, new: new, mode: mode, sameIdentity: { $0.id == $1.id },
                                       sameContent: { $0.value == $1.value }) == [])
                #expect(try raw == diff(old, new, identity: \.id2, content: \.value2, options: options))
                #expect(try diff(old, new, identity: \.id, content: \.value, \.other, options: options)
                        == diff(old, new, identity: \.id2, content: \.value2, \.other2, options: options))
            }
        }
    }
}

/// Fields of every type key paths compare where they lie, with computed twins that take
/// the generic path.
struct CommonFields: Equatable, CustomStringConvertible {
    var id: UUID
    var name: String
    var price: Double
    var ratio: Float
    var flag: Bool
    var small: Int32
    var tiny: Int8
    var when: Date
    var note: String?
    var maybeCount: Int?
    var maybePrice: Double?
    var maybeWhen: Date?
    var maybeFlag: Bool?
    var maybeID: UUID?

    var nameGenerically: String { name }
    var priceGenerically: Double { price }
    var whenGenerically: Date { when }
    var idGenerically: UUID { id }
    var description: String { "\(id.uuidString.prefix(4)):\(name):\(price)" }
}

@Suite struct StoredFieldTests {
    static let ids = (0..<12).map { UUID(uuid: (UInt8($0), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)) }

    static func random(using generator: inout SeededGenerator) -> CommonFields {
        func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &generator)] }
        return CommonFields(
            id: pick(ids), name: pick(["", "a", "a long string that lives on the heap, not inline"]),
            price: pick([0.0, -0.0, 1.5, .nan, .infinity]), ratio: pick([0, -0.0, .nan, 2]), flag: pick([true, false]),
            small: pick([0, -1, 7]), tiny: pick([0, 1]), when: Date(timeIntervalSinceReferenceDate: pick([0, -0.0, 86_400, .nan])),
            note: pick([nil, "", "x"]), maybeCount: pick([nil, 0, 1]), maybePrice: pick([nil, 0.0, -0.0, .nan]),
            maybeWhen: pick([nil, Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: .nan)]), maybeFlag: pick([nil, false, true]),
            maybeID: pick([nil, ids[0], ids[1]]))
    }

    /// Compared where they lie, fields answer what their types' `==` answers: -0.0 equals
    /// 0.0 and NaN equals nothing, strings by value wherever they are stored.
    @Test func fieldsCompareAsTheirTypes() {
        var generator = SeededGenerator(seed: 0xF1E1D5)
        let adapters: [(KeyPathAdapter<CommonFields, UUID, String, Double, Float, Bool>, (CommonFields, CommonFields) -> Bool)] = [
            (KeyPathAdapter(identity: \.id, content: \.name, \.price, \.ratio, \.flag),
             { $0.name == $1.name && $0.price == $1.price && $0.ratio == $1.ratio && $0.flag == $1.flag }),
        ]
        let optionals = KeyPathAdapter(identity: \CommonFields.id, content: \.note, \.maybeCount, \.maybePrice, \.maybeWhen)
        let more = KeyPathAdapter(identity: \CommonFields.id, content: \.small, \.tiny, \.when, \.maybeFlag)
        let ids = KeyPathAdapter(identity: \CommonFields.maybeID, content: \.maybeID)
        for _ in 0..<5_000 {
            let a = Self.random(using: &generator), b = Bool.random(using: &generator) ? a : Self.random(using: &generator)
            for (adapter, expected) in adapters {
                #expect(adapter.contentsEqual(a, b) == expected(a, b), "\(a) vs \(b)")
                #expect(adapter.identitiesEqual(a, b) == (a.id == b.id))
            }
            #expect(optionals.contentsEqual(a, b)
                    == (a.note == b.note && a.maybeCount == b.maybeCount && a.maybePrice == b.maybePrice && a.maybeWhen == b.maybeWhen))
            #expect(more.contentsEqual(a, b) == (a.small == b.small && a.tiny == b.tiny && a.when == b.when && a.maybeFlag == b.maybeFlag))
            #expect(ids.identitiesEqual(a, b) == (a.maybeID == b.maybeID) && ids.contentsEqual(a, b) == (a.maybeID == b.maybeID))
        }
    }

    /// Diffs through fields compared in place pass the Correctness rules and equal the diffs
    /// through computed twins (the generic path).
    @Test func inPlaceDiffsEqualGenericDiffs() throws {
        var generator = SeededGenerator(seed: 0x5704ED)
        for _ in 0..<1_000 {
            let old = (0..<Int.random(in: 0...30, using: &generator)).map { _ in Self.random(using: &generator) }
            let new = old.shuffled(using: &generator).prefix(Int.random(in: 0...old.count, using: &generator))
                .map { Int.random(in: 0..<4, using: &generator) == 0 ? Self.random(using: &generator) : $0 }
            let inPlace = try diff(old, new, identity: \.id, content: \.name, \.price, \.when)
            #expect(checkChangeset(inPlace, old: old, new: new, mode: .minimal, sameIdentity: { $0.id == $1.id },
                                   sameContent: { $0.name == $1.name && $0.price == $1.price && $0.when == $1.when }) == [])
            #expect(try inPlace == diff(old, new, identity: \.idGenerically, content: \.nameGenerically, \.priceGenerically, \.whenGenerically))
        }
    }
}

/// A field of each type a key-path adapter hashes where it lies.
struct HashedFields {
    var small: Int32, unsignedSmall: UInt32, short: Int16, unsignedShort: UInt16
    var tiny: Int8, byte: UInt8, flag: Bool, count: Int
    var name: String, id: UUID, price: Double, ratio: Float, when: Date
    var note: String?, maybeCount: Int?, maybePrice: Double?, maybeWhen: Date?, maybeFlag: Bool?, maybeID: UUID?
}

@Suite struct ContentHashTests {
    /// A field's hash as `KeyPathAdapter` documents it: the stable hash of a
    /// `StableHashable` type, else the per-process `hashValue` (an optional's too: the type
    /// decides, not the value, which a cast would unwrap).
    static func key<Value: Hashable>(_ value: Value) -> UInt64 {
        guard Value.self is any StableHashable.Type, let stable = value as? any StableHashable else {
            return UInt64(bitPattern: Int64(value.hashValue))
        }
        return stable.stableHash
    }

    static func fold(_ keys: UInt64...) -> UInt64 { keys.dropFirst().reduce(keys[0], combineStableHashes) }

    static func random(using generator: inout SeededGenerator) -> HashedFields {
        func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &generator)] }
        let ids = [UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)), UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1))]
        return HashedFields(
            small: pick([0, -1, .min, 7]), unsignedSmall: pick([0, .max, 7]), short: pick([0, -2, .max]), unsignedShort: pick([0, .max]),
            tiny: pick([0, -1, .min]), byte: pick([0, 255]), flag: pick([true, false]), count: pick([0, -5, .max]),
            name: pick(["", "a", "a long string that lives on the heap, not inline"]), id: pick(ids), price: pick([0.0, -0.0, 1.5]),
            ratio: pick([0, -2.5]), when: Date(timeIntervalSinceReferenceDate: pick([0, 86_400])),
            note: pick([nil, "", "x"]), maybeCount: pick([nil, 0, -1]), maybePrice: pick([nil, 0.0, 2]),
            maybeWhen: pick([nil, Date(timeIntervalSinceReferenceDate: 0)]), maybeFlag: pick([nil, false, true]), maybeID: pick([nil, ids[0]]))
    }

    /// Fields hashed where they lie give the documented hashes, row by row and in bulk.
    @Test func storedFieldsHashAsDocumented() {
        var generator = SeededGenerator(seed: 0x4A5_4ED)
        let rows = (0..<300).map { _ in Self.random(using: &generator) }
        func check<each Content: Hashable>(_ adapter: KeyPathAdapter<HashedFields, Int, repeat each Content>,
                                           _ expected: (HashedFields) -> UInt64) {
            var bulk = [UInt64](repeating: 0, count: rows.count)
            rows.withUnsafeBufferPointer { rows in bulk.withUnsafeMutableBufferPointer { adapter.writeContentHashes(of: rows, to: $0) } }
            for (row, hash) in zip(rows, bulk) {
                #expect(adapter.contentHash(of: row) == expected(row))
                #expect(hash == expected(row))
            }
        }
        check(KeyPathAdapter(identity: \.count, content: \.small, \.unsignedSmall, \.short, \.unsignedShort)) {
            Self.fold(Self.key($0.small), Self.key($0.unsignedSmall), Self.key($0.short), Self.key($0.unsignedShort))
        }
        check(KeyPathAdapter(identity: \.count, content: \.tiny, \.byte, \.flag, \.name)) {
            Self.fold(Self.key($0.tiny), Self.key($0.byte), Self.key($0.flag), Self.key($0.name))
        }
        check(KeyPathAdapter(identity: \.count, content: \.id, \.price, \.ratio, \.when)) {
            Self.fold(Self.key($0.id), Self.key($0.price), Self.key($0.ratio), Self.key($0.when))
        }
        check(KeyPathAdapter(identity: \.count, content: \.note, \.maybeCount, \.maybePrice, \.maybeWhen)) {
            Self.fold(Self.key($0.note), Self.key($0.maybeCount), Self.key($0.maybePrice), Self.key($0.maybeWhen))
        }
        check(KeyPathAdapter(identity: \.count, content: \.maybeFlag, \.maybeID, \.count)) {
            Self.fold(Self.key($0.maybeFlag), Self.key($0.maybeID), Self.key($0.count))
        }
        check(KeyPathAdapter(identity: \.count, content: \.name)) { Self.key($0.name) }
    }
}
