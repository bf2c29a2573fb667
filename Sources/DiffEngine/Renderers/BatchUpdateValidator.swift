#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One kind of change in a batch, as the validator names it.
public enum BatchOperation: String, Sendable, Hashable, Codable {
    /// A delete (old side).
    case delete
    /// An insert (new side).
    case insert
    /// A reload (old side).
    case reload
    /// The source of a move (old side).
    case moveFrom
    /// The destination of a move (new side).
    case moveTo
}

/// A rule of UIKit's batch updates that a batch breaks: each would raise
/// `NSInternalInconsistencyException` ("Invalid update") in `performBatchUpdates`.
public enum BatchUpdateViolation: Hashable, Sendable, CustomStringConvertible {
    /// An index path that is not `[section, row]`.
    case malformedIndexPath(BatchOperation, IndexPath)
    /// A section index outside the old (delete, reload, move from) or new (insert, move
    /// to) sections.
    case sectionOutOfRange(BatchOperation, section: Int, sectionCount: Int)
    /// A row outside its section's old or new row count.
    case rowOutOfRange(BatchOperation, IndexPath, rowCount: Int)
    /// One section deleted, reloaded or moved twice (old side) or inserted or moved into
    /// twice (new side).
    case sectionTouchedTwice(section: Int, BatchOperation, BatchOperation)
    /// One row deleted, reloaded or moved twice (old side) or inserted or moved into twice
    /// (new side): reload + move and reload + delete of one row are this case.
    case rowTouchedTwice(IndexPath, BatchOperation, BatchOperation)
    /// A row change inside a section that is deleted or reloaded in the same batch (old
    /// side), for instance a move from a deleted section.
    case rowInRemovedSection(BatchOperation, IndexPath)
    /// A row change inside a section that is inserted in the same batch (new side): an
    /// inserted section comes with all its rows.
    case rowInInsertedSection(BatchOperation, IndexPath)
    /// A row inserted or moved into a section that the same batch reloads (new side): UIKit
    /// treats a section reload as a delete and an insert, which bring all its rows.
    case rowInReloadedSection(BatchOperation, IndexPath)
    /// The new section count is not old − deleted + inserted.
    case sectionCountMismatch(expected: Int, actual: Int)
    /// A section's new row count is not old − deleted − moved out + inserted + moved in.
    case rowCountMismatch(section: Int, expected: Int, actual: Int)

    /// The rule and where it is broken, on one line.
    public var description: String {
        switch self {
        case let .malformedIndexPath(operation, path): "\(operation) of \(path): not a [section, row] index path"
        case let .sectionOutOfRange(operation, section, count): "\(operation) of section \(section), but there are \(count) sections"
        case let .rowOutOfRange(operation, path, count): "\(operation) of row \(path), but its section has \(count) rows"
        case let .sectionTouchedTwice(section, first, second): "section \(section) is in both \(first) and \(second)"
        case let .rowTouchedTwice(path, first, second): "row \(path) is in both \(first) and \(second)"
        case let .rowInRemovedSection(operation, path): "\(operation) of row \(path) in a section that is deleted or reloaded"
        case let .rowInInsertedSection(operation, path): "\(operation) of row \(path) in a section that is inserted"
        case let .rowInReloadedSection(operation, path): "\(operation) of row \(path) into a section that is reloaded"
        case let .sectionCountMismatch(expected, actual): "\(actual) sections after the update, but old - deleted + inserted is \(expected)"
        case let .rowCountMismatch(section, expected, actual): "section \(section) has \(actual) rows after the update, but old - deleted - moved out + inserted + moved in is \(expected)"
        }
    }
}

/// Models the checks UIKit makes on `performBatchUpdates`, so that a batch can be proven
/// valid before any table view sees it.
public enum BatchUpdateValidator {
    /// Every rule `batch` breaks, for sections with these row counts before and after.
    /// - Parameters:
    ///   - batch: the batch to check.
    ///   - oldRowCounts: the row count of each section before the update.
    ///   - newRowCounts: the row count of each section after it (what the data source will say).
    /// - Returns: the violations; empty when UIKit would accept the batch.
    /// - Complexity: O(sections + changes).
    public static func validate(_ batch: BatchUpdate, oldRowCounts: [Int], newRowCounts: [Int]) -> [BatchUpdateViolation] {
        var violations: [BatchUpdateViolation] = []
        let oldSections = oldRowCounts.count, newSections = newRowCounts.count

        // Sections: range and at most one operation each, per side.
        var oldSectionOperation: [Int: BatchOperation] = [:], newSectionOperation: [Int: BatchOperation] = [:]
        func claimSection(_ section: Int, _ operation: BatchOperation, old: Bool) {
            let count = old ? oldSections : newSections
            guard (0..<count).contains(section) else {
                violations.append(.sectionOutOfRange(operation, section: section, sectionCount: count))
                return
            }
            if let earlier = old ? oldSectionOperation[section] : newSectionOperation[section] {
                violations.append(.sectionTouchedTwice(section: section, earlier, operation))
            } else if old {
                oldSectionOperation[section] = operation
            } else {
                newSectionOperation[section] = operation
            }
        }
        batch.sectionDeletes.forEach { claimSection($0, .delete, old: true) }
        batch.sectionReloads.forEach { claimSection($0, .reload, old: true) }
        batch.sectionMoves.forEach { claimSection($0.from, .moveFrom, old: true) }
        batch.sectionInserts.forEach { claimSection($0, .insert, old: false) }
        batch.sectionMoves.forEach { claimSection($0.to, .moveTo, old: false) }
        let expectedSections = oldSections - Set(batch.sectionDeletes).count + Set(batch.sectionInserts).count
        if expectedSections != newSections {
            violations.append(.sectionCountMismatch(expected: expectedSections, actual: newSections))
        }

        // Where each surviving old section lands: at its moved-to position or, in order, at
        // the new positions nobody inserts or moves into. A reloaded section is deleted and
        // inserted again as UIKit sees it, so no row change may land in it either.
        let movedTo = Dictionary(batch.sectionMoves.map { ($0.from, $0.to) }, uniquingKeysWith: { first, _ in first })
        let targeted = Set(batch.sectionInserts).union(batch.sectionMoves.map(\.to))
        var freeNew = (0..<newSections).filter { !targeted.contains($0) }.makeIterator()
        var landing: [(old: Int, new: Int)] = []
        for oldSection in 0..<oldSections where oldSectionOperation[oldSection] != .delete {
            guard let newSection = movedTo[oldSection] ?? freeNew.next() else { break }
            landing.append((oldSection, newSection))
        }
        let reloadedNew = Set(landing.filter { oldSectionOperation[$0.old] == .reload }.map(\.new))

        // Rows: well-formed, in range, outside removed or inserted sections, one operation each.
        var oldRowOperation: [IndexPath: BatchOperation] = [:], newRowOperation: [IndexPath: BatchOperation] = [:]
        var movedOut = [Int](repeating: 0, count: oldSections), deleted = [Int](repeating: 0, count: oldSections)
        var movedIn = [Int](repeating: 0, count: newSections), inserted = [Int](repeating: 0, count: newSections)
        func claimRow(_ path: IndexPath, _ operation: BatchOperation, old: Bool) -> Bool {
            guard path.count == 2 else {
                violations.append(.malformedIndexPath(operation, path))
                return false
            }
            let counts = old ? oldRowCounts : newRowCounts
            guard (0..<counts.count).contains(path[0]) else {
                violations.append(.sectionOutOfRange(operation, section: path[0], sectionCount: counts.count))
                return false
            }
            guard (0..<counts[path[0]]).contains(path[1]) else {
                violations.append(.rowOutOfRange(operation, path, rowCount: counts[path[0]]))
                return false
            }
            if old, let sectionOperation = oldSectionOperation[path[0]], sectionOperation != .moveFrom {
                violations.append(.rowInRemovedSection(operation, path))
                return false
            }
            if !old, newSectionOperation[path[0]] == .insert {
                violations.append(.rowInInsertedSection(operation, path))
                return false
            }
            if !old, reloadedNew.contains(path[0]) {
                violations.append(.rowInReloadedSection(operation, path))
                return false
            }
            if let earlier = old ? oldRowOperation[path] : newRowOperation[path] {
                violations.append(.rowTouchedTwice(path, earlier, operation))
                return false
            }
            if old { oldRowOperation[path] = operation } else { newRowOperation[path] = operation }
            return true
        }
        for path in batch.deletes where claimRow(path, .delete, old: true) { deleted[path[0]] += 1 }
        for path in batch.reloads { _ = claimRow(path, .reload, old: true) }
        for move in batch.moves where claimRow(move.from, .moveFrom, old: true) { movedOut[move.from[0]] += 1 }
        for path in batch.inserts where claimRow(path, .insert, old: false) { inserted[path[0]] += 1 }
        for move in batch.moves where claimRow(move.to, .moveTo, old: false) { movedIn[move.to[0]] += 1 }

        // Row counts of each surviving section where it lands.
        guard violations.isEmpty else { return violations }
        for (oldSection, newSection) in landing {
            if oldSectionOperation[oldSection] == .reload { continue } // UIKit asks the data source afresh
            let expected = oldRowCounts[oldSection] - deleted[oldSection] - movedOut[oldSection]
                + inserted[newSection] + movedIn[newSection]
            if expected != newRowCounts[newSection] {
                violations.append(.rowCountMismatch(section: newSection, expected: expected, actual: newRowCounts[newSection]))
            }
        }
        return violations
    }

    /// Every rule `batch` breaks for one section of `oldCount` rows becoming `newCount` rows.
    public static func validate(_ batch: BatchUpdate, oldCount: Int, newCount: Int) -> [BatchUpdateViolation] {
        validate(batch, oldRowCounts: [oldCount], newRowCounts: [newCount])
    }
}
