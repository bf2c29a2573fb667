#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Index paths go over the wire as plain `[section, row]` arrays: Foundation's own
// encoding of `IndexPath` differs between platforms (`{"indexes": […]}` on Linux).

extension BatchMove {
    /// Decodes the two-element array `[from, to]`.
    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        from = try container.decode(Position.self)
        to = try container.decode(Position.self)
    }

    /// Encodes as the two-element array `[from, to]`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(from)
        try container.encode(to)
    }
}

/// Index paths as plain arrays, the wire form.
func _indexPathArrays(_ paths: [IndexPath]) -> [[Int]] { paths.map { Array($0) } }
/// Index paths from their wire form.
func _indexPaths(_ arrays: [[Int]]) -> [IndexPath] { arrays.map { IndexPath(indexes: $0) } }

extension BatchUpdate {
    private enum CodingKeys: String, CodingKey {
        case sectionDeletes, sectionInserts, sectionReloads, sectionMoves, deletes, inserts, reloads, moves
    }

    /// Decodes the value from the JSON object ``encode(to:)`` writes.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            sectionDeletes: try container.decode([Int].self, forKey: .sectionDeletes),
            sectionInserts: try container.decode([Int].self, forKey: .sectionInserts),
            sectionReloads: try container.decode([Int].self, forKey: .sectionReloads),
            sectionMoves: try container.decode([BatchMove<Int>].self, forKey: .sectionMoves),
            deletes: _indexPaths(try container.decode([[Int]].self, forKey: .deletes)),
            inserts: _indexPaths(try container.decode([[Int]].self, forKey: .inserts)),
            reloads: _indexPaths(try container.decode([[Int]].self, forKey: .reloads)),
            moves: try container.decode([[[Int]]].self, forKey: .moves).map { pair in
                guard pair.count == 2 else {
                    throw DecodingError.dataCorruptedError(forKey: .moves, in: container, debugDescription: "a move is [from, to]")
                }
                return BatchMove(from: IndexPath(indexes: pair[0]), to: IndexPath(indexes: pair[1]))
            })
    }

    /// Encodes the value's fields as a JSON object.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(sectionDeletes, forKey: .sectionDeletes)
        try container.encode(sectionInserts, forKey: .sectionInserts)
        try container.encode(sectionReloads, forKey: .sectionReloads)
        try container.encode(sectionMoves, forKey: .sectionMoves)
        try container.encode(_indexPathArrays(deletes), forKey: .deletes)
        try container.encode(_indexPathArrays(inserts), forKey: .inserts)
        try container.encode(_indexPathArrays(reloads), forKey: .reloads)
        try container.encode(moves.map { [Array($0.from), Array($0.to)] }, forKey: .moves)
    }
}
