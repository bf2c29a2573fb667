#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Index paths as `[section, row]` arrays, as in BatchUpdate+Codable.swift.

extension IndexPathPair {
    /// Decodes `[[section, row], [section, row]]`, old then new.
    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        old = IndexPath(indexes: try container.decode([Int].self))
        new = IndexPath(indexes: try container.decode([Int].self))
    }

    /// Encodes as `[[section, row], [section, row]]`, old then new.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(Array(old))
        try container.encode(Array(new))
    }
}

extension SectionedChangeset {
    private enum CodingKeys: String, CodingKey {
        case sections, itemDeletions, itemInsertions, itemUpdates, itemMoves
    }

    /// Decodes the value from the JSON object ``encode(to:)`` writes.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        sections = try container.decode(Changeset.self, forKey: .sections)
        itemDeletions = _indexPaths(try container.decode([[Int]].self, forKey: .itemDeletions))
        itemInsertions = _indexPaths(try container.decode([[Int]].self, forKey: .itemInsertions))
        itemUpdates = try container.decode([IndexPathPair].self, forKey: .itemUpdates)
        itemMoves = try container.decode([IndexPathPair].self, forKey: .itemMoves)
    }

    /// Encodes the value's fields as a JSON object.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(sections, forKey: .sections)
        try container.encode(_indexPathArrays(itemDeletions), forKey: .itemDeletions)
        try container.encode(_indexPathArrays(itemInsertions), forKey: .itemInsertions)
        try container.encode(itemUpdates, forKey: .itemUpdates)
        try container.encode(itemMoves, forKey: .itemMoves)
    }
}
