import DiffEngine
import DiffEngineTestSupport
import Foundation

/// The row of the `rows-*` scenarios: an integer identity and an integer content.
struct Row: Identifiable, Hashable, Sendable {
    var id: Int
    var value: Int
}

/// A row with a 36-character UUID string identity.
struct NamedRow: Identifiable, Hashable, Sendable {
    var id: String
    var value: Int
}

/// A record of common field types: a UUID identity and three content fields, one optional.
struct Record: Identifiable, Hashable, Sendable {
    var id: UUID
    var title: String
    var price: Double
    var updatedAt: Date?
}

/// The data of one scenario; every engine gets the same arrays.
enum Workload {
    case rows(old: [Row], new: [Row])
    case uuids(old: [UUID], new: [UUID])
    case named(old: [NamedRow], new: [NamedRow])
    case records(old: [Record], new: [Record])
    case bytes(ByteRowAdapter, old: [ByteRow], new: [ByteRow])
    case sections(old: [SectionData<Row, Row>], new: [SectionData<Row, Row>])

    var counts: (old: Int, new: Int) {
        switch self {
        case .rows(let old, let new): (old.count, new.count)
        case .uuids(let old, let new): (old.count, new.count)
        case .named(let old, let new): (old.count, new.count)
        case .records(let old, let new): (old.count, new.count)
        case .bytes(_, let old, let new): (old.count, new.count)
        case .sections(let old, let new): (old.reduce(0) { $0 + $1.items.count }, new.reduce(0) { $0 + $1.items.count })
        }
    }
}

/// A named, seeded input: the same name always gives the same data.
struct Scenario: Sendable {
    var name: String
    var size: Int
    var summary: String
    /// Rough edit distance, to decide whether an O((m + n) · D) peer is worth running.
    var editDistance: Int
    var make: @Sendable () -> Workload
}

/// Rates of change applied to an old list to make the new one.
struct ChangeRates {
    var delete = 0.10, insert = 0.10, move = 0.02, update = 0.02
    static let none = ChangeRates(delete: 0, insert: 0, move: 0, update: 0)
}

/// New from old: deletes, updates, moves (to a random place) and inserts at the given
/// rates, in O(n log n) by sorting on a position key.
func perturb<T>(_ old: [T], _ rates: ChangeRates, using generator: inout SeededGenerator,
                update: (T) -> T, fresh: (inout SeededGenerator) -> T) -> [T] {
    var keyed: [(position: Double, row: T)] = []
    keyed.reserveCapacity(old.count + Int(Double(old.count) * rates.insert) + 1)
    let span = Double(Swift.max(old.count, 1))
    for (index, row) in old.enumerated() {
        if Double.random(in: 0..<1, using: &generator) < rates.delete { continue }
        let kept = Double.random(in: 0..<1, using: &generator) < rates.update ? update(row) : row
        let position = Double.random(in: 0..<1, using: &generator) < rates.move
            ? Double.random(in: 0..<span, using: &generator) : Double(index)
        keyed.append((position, kept))
    }
    for _ in 0..<Int(Double(old.count) * rates.insert) {
        keyed.append((Double.random(in: 0..<span, using: &generator), fresh(&generator)))
    }
    return keyed.enumerated().sorted {
        ($0.element.position, $0.offset) < ($1.element.position, $1.offset)
    }.map(\.element.row)
}

func randomUUID(_ generator: inout SeededGenerator) -> UUID {
    let high = generator.next(), low = generator.next()
    return withUnsafeBytes(of: (high, low)) { raw in
        UUID(uuid: (raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7],
                    raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]))
    }
}

func rowScenario(_ name: String, size: Int, rates: ChangeRates, alphabet: Int? = nil, summary: String) -> Scenario {
    let distance = Int(Double(size) * (rates.delete + rates.insert + 2 * rates.move))
    return Scenario(name: name, size: size, summary: summary, editDistance: distance) {
        var generator = SeededGenerator(seed: 0x5EED_0000 &+ UInt64(size))
        func freshID(_ generator: inout SeededGenerator) -> Int {
            alphabet.map { Int.random(in: 0..<$0, using: &generator) } ?? Int.random(in: 0..<Int.max, using: &generator)
        }
        let old = (0..<size).map { _ in Row(id: freshID(&generator), value: Int.random(in: 0..<1000, using: &generator)) }
        let new = perturb(old, rates, using: &generator, update: { Row(id: $0.id, value: $0.value + 1) },
                          fresh: { Row(id: freshID(&$0), value: Int.random(in: 0..<1000, using: &$0)) })
        return .rows(old: old, new: new)
    }
}

/// DifferenceKit's benchmark shape: delete a range of 10%, insert 10%, shuffle 2%.
func uuidScenario(size: Int) -> Scenario {
    Scenario(name: "uuid-\(size / 1000)k", size: size,
             summary: "\(size) UUIDs: delete a 10% range, insert 10%, shuffle 2% (DifferenceKit's shape)",
             editDistance: size / 2) {
        var generator = SeededGenerator(seed: 0xD1FF_C17 &+ UInt64(size))
        let old = (0..<size).map { _ in randomUUID(&generator) }
        var new = old
        new.removeSubrange(size / 10..<2 * size / 10)
        new.insert(contentsOf: (0..<size / 10).map { _ in randomUUID(&generator) }, at: new.count / 2)
        new[0..<size / 50].shuffle(using: &generator)
        return .uuids(old: old, new: new)
    }
}

func namedScenario(size: Int) -> Scenario {
    Scenario(name: "strings-\(size / 1000)k", size: size,
             summary: "\(size) rows with 36-character UUID string ids, 10% -, 10% +, 2% moved, 2% updated",
             editDistance: size / 4) {
        var generator = SeededGenerator(seed: 0x57F1_0000 &+ UInt64(size))
        let old = (0..<size).map { _ in NamedRow(id: randomUUID(&generator).uuidString, value: Int.random(in: 0..<1000, using: &generator)) }
        let new = perturb(old, ChangeRates(), using: &generator, update: { NamedRow(id: $0.id, value: $0.value + 1) },
                          fresh: { NamedRow(id: randomUUID(&$0).uuidString, value: Int.random(in: 0..<1000, using: &$0)) })
        return .named(old: old, new: new)
    }
}

func recordScenario(_ name: String, size: Int, rates: ChangeRates, summary: String) -> Scenario {
    Scenario(name: name, size: size, summary: summary, editDistance: size / 4) {
        var generator = SeededGenerator(seed: 0x2EC0_0000 &+ UInt64(size))
        func fresh(_ generator: inout SeededGenerator) -> Record {
            let stamp = Int.random(in: 0..<4, using: &generator)
            return Record(id: randomUUID(&generator), title: "Order \(Int.random(in: 0..<1_000_000, using: &generator))",
                          price: Double(Int.random(in: 100..<100_000, using: &generator)) / 100,
                          updatedAt: stamp == 0 ? nil : Date(timeIntervalSinceReferenceDate: Double(stamp * 86_400)))
        }
        let old = (0..<size).map { _ in fresh(&generator) }
        let new = perturb(old, rates, using: &generator, update: { var row = $0; row.price += 1; return row }, fresh: fresh)
        return .records(old: old, new: new)
    }
}

/// Byte rows: CSV-like lines `id,value` in one buffer; identity the id field, content the line.
func byteScenario(size: Int) -> Scenario {
    Scenario(name: "bytes-\(size / 1000)k", size: size,
             summary: "\(size) byte rows `id,value` in one buffer, 10% -, 10% +, 2% moved, 2% updated",
             editDistance: size / 4) {
        var generator = SeededGenerator(seed: 0xB7E5_0000 &+ UInt64(size))
        let old = (0..<size).map { _ in "\(Int.random(in: 0..<Int.max, using: &generator)),\(Int.random(in: 0..<1000, using: &generator))" }
        let new = perturb(old, ChangeRates(), using: &generator, update: { $0 + "1" },
                          fresh: { "\(Int.random(in: 0..<Int.max, using: &$0)),\(Int.random(in: 0..<1000, using: &$0))" })
        var bytes: [UInt8] = []
        func append(_ line: String) -> ByteRow {
            let start = bytes.count
            bytes.append(contentsOf: line.utf8)
            let comma = bytes[start...].firstIndex(of: UInt8(ascii: ","))!
            return ByteRow(identity: start..<comma, content: start..<bytes.count)
        }
        let oldRows = old.map(append), newRows = new.map(append)
        return .bytes(ByteRowAdapter(bytes: bytes), old: oldRows, new: newRows)
    }
}

/// 1,000 sections of 100 items: 10% of the items changed (deleted, inserted, moved within
/// or across sections, updated) and 2% of the sections moved.
func sectionScenario(sections: Int, itemsEach: Int) -> Scenario {
    let size = sections * itemsEach
    return Scenario(name: "sections-\(size / 1000)k", size: size,
                    summary: "\(sections) sections × \(itemsEach) items, 10% of items changed, 2% of sections moved, staged",
                    editDistance: size / 5) {
        var generator = SeededGenerator(seed: 0x5EC7_0000 &+ UInt64(size))
        var nextID = 0
        func fresh(_ generator: inout SeededGenerator) -> Row {
            nextID += 1
            return Row(id: nextID, value: Int.random(in: 0..<1000, using: &generator))
        }
        let old = (0..<sections).map { _ in SectionData(header: fresh(&generator), items: (0..<itemsEach).map { _ in fresh(&generator) }) }
        var new = old
        // 2% of sections move; 10% of items change: a quarter each deleted, inserted, updated, moved.
        for _ in 0..<sections / 50 {
            let moved = new.remove(at: Int.random(in: 0..<new.count, using: &generator))
            new.insert(moved, at: Int.random(in: 0...new.count, using: &generator))
        }
        let changes = size / 10
        for change in 0..<changes {
            let s = Int.random(in: 0..<new.count, using: &generator)
            switch change % 4 {
            case 0 where !new[s].items.isEmpty: new[s].items.remove(at: Int.random(in: 0..<new[s].items.count, using: &generator))
            case 1: new[s].items.insert(fresh(&generator), at: Int.random(in: 0...new[s].items.count, using: &generator))
            case 2 where !new[s].items.isEmpty: new[s].items[Int.random(in: 0..<new[s].items.count, using: &generator)].value += 1
            case 3 where !new[s].items.isEmpty:
                let item = new[s].items.remove(at: Int.random(in: 0..<new[s].items.count, using: &generator))
                let target = Int.random(in: 0..<new.count, using: &generator)
                new[target].items.insert(item, at: Int.random(in: 0...new[target].items.count, using: &generator))
            default: break
            }
        }
        return .sections(old: old, new: new)
    }
}

/// Scenarios run only when named exactly (`--scenario rows-10m`): too slow for the default run.
let optInScenarios: [Scenario] = [
    rowScenario("rows-10m", size: 10_000_000, rates: ChangeRates(), summary: "10,000,000 rows: 10% -, 10% +, 2% moved, 2% updated"),
]

/// Every built-in scenario, in the order the table lists them.
let allScenarios: [Scenario] = [
    uuidScenario(size: 5_000),
    uuidScenario(size: 100_000),
    rowScenario("rows-5k", size: 5_000, rates: ChangeRates(), summary: "5,000 rows: 10% -, 10% +, 2% moved, 2% updated"),
    rowScenario("rows-100k", size: 100_000, rates: ChangeRates(), summary: "100,000 rows: 10% -, 10% +, 2% moved, 2% updated"),
    rowScenario("rows-1m", size: 1_000_000, rates: ChangeRates(), summary: "1,000,000 rows: 10% -, 10% +, 2% moved, 2% updated"),
    rowScenario("nochange-100k", size: 100_000, rates: .none, summary: "100,000 rows, nothing changed"),
    rowScenario("nochange-1m", size: 1_000_000, rates: .none, summary: "1,000,000 rows, nothing changed"),
    rowScenario("allnew-100k", size: 100_000, rates: ChangeRates(delete: 1, insert: 1, move: 0, update: 0),
                summary: "100,000 rows replaced by 100,000 new ones"),
    rowScenario("alldeleted-100k", size: 100_000, rates: ChangeRates(delete: 1, insert: 0, move: 0, update: 0),
                summary: "100,000 rows, all deleted"),
    rowScenario("duplicates-100k", size: 100_000, rates: ChangeRates(), alphabet: 1_000,
                summary: "100,000 rows over 1,000 ids (100 copies each), 10% -, 10% +, 2% moved, 2% updated"),
    namedScenario(size: 100_000),
    recordScenario("records-100k", size: 100_000, rates: ChangeRates(),
                   summary: "100,000 records (UUID id; String, Double and Date? fields): 10% -, 10% +, 2% moved, 2% updated"),
    recordScenario("records-nochange-100k", size: 100_000, rates: .none, summary: "100,000 records, nothing changed"),
    byteScenario(size: 100_000),
    sectionScenario(sections: 1_000, itemsEach: 100),
]
