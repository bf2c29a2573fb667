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

    private struct Event: Decodable {
        struct Changes: Decodable {
            var oldCount: Int
            var newCount: Int
            var deletions: [Int]
            var insertions: [Int]
            var updates: [[Int]]
            var moves: [[Int]]
        }
        var isInitial: Bool
        var version: Int
        var committedAt: Int64
        var changes: Changes
        var rows: [String: Order]
    }

    private struct ErrorEvent: Decodable { var error: String }

    /// Applies one event; returns its `committedAt` (milliseconds) and whether it was initial.
    @discardableResult
    public mutating func apply(_ text: [UInt8]) throws -> (committedAt: Int64, isInitial: Bool) {
        let decoder = JSONDecoder()
        let event: Event
        do {
            event = try decoder.decode(Event.self, from: Data(text))
        } catch {
            if let failure = try? decoder.decode(ErrorEvent.self, from: Data(text)) { throw BadEvent(message: failure.error) }
            throw BadEvent(message: "not an event: \(error)")
        }
        let changes = event.changes
        func order(_ index: Int) throws -> Order {
            guard let row = event.rows[String(index)] else { throw BadEvent(message: "no row \(index)") }
            return row
        }
        if event.isInitial {
            rows = try (0..<changes.newCount).map(order)
        } else {
            guard changes.oldCount == rows.count else { throw BadEvent(message: "event for \(changes.oldCount) rows, have \(rows.count)") }
            var leaving = Set(changes.deletions)
            for move in changes.moves { leaving.insert(move[0]) }
            var next = [Order?](repeating: nil, count: changes.newCount)
            for move in changes.moves { next[move[1]] = rows[move[0]] }
            for index in changes.insertions { next[index] = try order(index) }
            let current = rows
            var kept = current.indices.filter { !leaving.contains($0) }.map { current[$0] }.makeIterator()
            for index in next.indices where next[index] == nil { next[index] = kept.next() }
            for update in changes.updates { next[update[1]] = try order(update[1]) }
            guard !next.contains(where: { $0 == nil }) else { throw BadEvent(message: "event leaves holes") }
            rows = next.map { $0! }
        }
        version = event.version
        events += 1
        return (event.committedAt, event.isInitial)
    }
}
