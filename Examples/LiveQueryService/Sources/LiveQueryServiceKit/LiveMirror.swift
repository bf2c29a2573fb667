import Foundation

/// A client's copy of a live query's rows, kept by applying each event by index as the
/// page does: deleted and moved rows leave, moved and inserted rows take their new
/// indexes, the other rows keep their order and fill the rest, updated rows get new values.
public struct LiveMirror: Sendable {
    public private(set) var rows: [Order] = []
    public private(set) var version = 0
    public private(set) var events = 0

    public init() {}

    public struct BadEvent: Error { public var message: String }

    /// Applies one event; returns its `committedAt` (milliseconds) and whether it was initial.
    @discardableResult
    public mutating func apply(_ text: [UInt8]) throws -> (committedAt: Int64, isInitial: Bool) {
        guard let event = try JSONSerialization.jsonObject(with: Data(text)) as? [String: Any] else { throw BadEvent(message: "not an object") }
        if let error = event["error"] as? String { throw BadEvent(message: error) }
        guard let changes = event["changes"] as? [String: Any], let newCount = changes["newCount"] as? Int,
              let rowsByIndex = event["rows"] as? [String: Any], let isInitial = event["isInitial"] as? Bool else {
            throw BadEvent(message: "not an event")
        }
        func order(_ index: Int) throws -> Order {
            guard let object = rowsByIndex[String(index)],
                  let data = try? JSONSerialization.data(withJSONObject: object) else { throw BadEvent(message: "no row \(index)") }
            return try JSONDecoder().decode(Order.self, from: data)
        }
        let deletions = changes["deletions"] as? [Int] ?? []
        let insertions = changes["insertions"] as? [Int] ?? []
        let updates = (changes["updates"] as? [[Int]] ?? []).map { ($0[0], $0[1]) }
        let moves = (changes["moves"] as? [[Int]] ?? []).map { ($0[0], $0[1]) }
        if isInitial {
            rows = try (0..<newCount).map(order)
        } else {
            guard (changes["oldCount"] as? Int) == rows.count else { throw BadEvent(message: "event for \(changes["oldCount"] ?? "?") rows, have \(rows.count)") }
            var leaving = Set(deletions)
            for (from, _) in moves { leaving.insert(from) }
            var next = [Order?](repeating: nil, count: newCount)
            for (from, to) in moves { next[to] = rows[from] }
            for index in insertions { next[index] = try order(index) }
            let current = rows
            var kept = current.indices.filter { !leaving.contains($0) }.map { current[$0] }.makeIterator()
            for index in next.indices where next[index] == nil { next[index] = kept.next() }
            for (_, index) in updates { next[index] = try order(index) }
            guard !next.contains(where: { $0 == nil }) else { throw BadEvent(message: "event leaves holes") }
            rows = next.map { $0! }
        }
        version = event["version"] as? Int ?? version
        events += 1
        return ((event["committedAt"] as? NSNumber)?.int64Value ?? 0, isInitial)
    }
}
