#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Renders a changeset as one JSON object (the command-line tool prints the same), for services that send
/// changes to clients: `{"oldCount":m,"newCount":n,"deletions":[…],"insertions":[…],
/// "updates":[[i,j]…],"moves":[[i,j]…]}`, plus `"droppedOld"` and `"droppedNew"` under
/// `DuplicatePolicy.firstWins`. Keys in that order, one line, ending in a newline.
public struct JSONChangesetRenderer: ChangesetRenderer {
    /// Creates a renderer.
    public init() {}

    /// - Complexity: O(changes); written by hand, with no intermediate objects.
    public func render(_ changeset: Changeset) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(96 + 8 * (changeset.deletions.count + changeset.insertions.count)
                            + 16 * (changeset.updates.count + changeset.moves.count))
        func append(_ text: String) { out.append(contentsOf: text.utf8) }
        func list(_ values: [Int]) {
            out.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                append(String(value))
            }
            out.append(UInt8(ascii: "]"))
        }
        func pairs(_ values: [IndexPair]) {
            out.append(UInt8(ascii: "["))
            for (index, pair) in values.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                append("[\(pair.old),\(pair.new)]")
            }
            out.append(UInt8(ascii: "]"))
        }
        append("{\"oldCount\":\(changeset.oldCount),\"newCount\":\(changeset.newCount),\"deletions\":")
        list(changeset.deletions)
        append(",\"insertions\":")
        list(changeset.insertions)
        append(",\"updates\":")
        pairs(changeset.updates)
        append(",\"moves\":")
        pairs(changeset.moves)
        if let droppedOld = changeset.droppedOld, let droppedNew = changeset.droppedNew {
            append(",\"droppedOld\":")
            list(droppedOld)
            append(",\"droppedNew\":")
            list(droppedNew)
        }
        append("}\n")
        return out
    }
}

/// Renders a staged sectioned changeset as JSON: the sectioned changeset and, for each
/// stage, its batch and the sections to show after it:
/// `{"changeset":{…},"stages":[{"batch":{…},"sections":[{"header":…,"items":[…]}…]}…]}`.
/// Index paths are `[section, row]` arrays; headers and items use their own `Encodable`
/// form.
public struct JSONStagesRenderer<Header: Encodable, Item: Encodable>: ChangesetRenderer {
    /// Creates a renderer.
    public init() {}

    private struct EncodedSection: Encodable {
        var header: Header
        var items: [Item]
    }

    private struct EncodedStage: Encodable {
        var batch: BatchUpdate
        var sections: [EncodedSection]
    }

    private struct Document: Encodable {
        var changeset: SectionedChangeset
        var stages: [EncodedStage]
    }

    /// Renders the sectioned changeset and every stage as one JSON object, one line (the
    /// shape above), with keys sorted.
    /// - Complexity: O(changes + rows shown by the stages).
    /// - Note: Traps if a header's or item's own `Encodable` conformance throws.
    public func render(_ staged: StagedChangeset<Header, Item>) -> [UInt8] {
        let document = Document(changeset: staged.changeset, stages: staged.stages.map { stage in
            EncodedStage(batch: stage.batch, sections: stage.sections.map { EncodedSection(header: $0.header, items: $0.items) })
        })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            return Array(try encoder.encode(document))
        } catch {
            preconditionFailure("encoding the stages failed: \(error)")
        }
    }
}
