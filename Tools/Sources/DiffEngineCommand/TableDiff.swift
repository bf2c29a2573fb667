import DiffEngine
import DiffEngineFiles
import Foundation

/// One side's rows, borrowed for the length of a diff (no reference counting per row).
struct SideView {
    let keyHashes: UnsafeBufferPointer<UInt64>
    let contentHashes: UnsafeBufferPointer<UInt64>
    let keyBytes: UnsafeBufferPointer<UInt8>
    let keyEnds: UnsafeBufferPointer<Int>

    var count: Int { keyHashes.count }

    func key(_ index: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: keyBytes[(index == 0 ? 0 : keyEnds[index - 1])..<keyEnds[index]])
    }

    static func with<Result>(_ rows: TableRows, _ body: (SideView) throws -> Result) rethrows -> Result {
        try rows.keyHashes.withUnsafeBufferPointer { keyHashes in
            try rows.contentHashes.withUnsafeBufferPointer { contentHashes in
                try rows.keyBytes.withUnsafeBufferPointer { keyBytes in
                    try rows.keyEnds.withUnsafeBufferPointer { keyEnds in
                        try body(SideView(keyHashes: keyHashes, contentHashes: contentHashes, keyBytes: keyBytes, keyEnds: keyEnds))
                    }
                }
            }
        }
    }
}

/// Reads the rows of a table pair for the engine: a row is its index, old rows first
/// (`0..<old.count`), then new rows (`old.count + j`). Identities compare as exact bytes;
/// contents by their secret-keyed hashes.
struct TableRowAdapter: RowAdapter {
    typealias Row = Int32

    let old: SideView
    let new: SideView

    @inline(__always)
    private func side(_ row: Int32) -> (SideView, Int) {
        Int(row) < old.count ? (old, Int(row)) : (new, Int(row) - old.count)
    }

    func identityKey(of row: Int32) -> UInt64 {
        let (rows, index) = side(row)
        return rows.keyHashes[index]
    }

    func writeIdentityKeys(of rows: UnsafeBufferPointer<Int32>, to keys: UnsafeMutableBufferPointer<UInt64>) {
        precondition(rows.count == keys.count, "one key a row")
        // Each side is passed whole, in order: copy its precomputed hashes.
        if let first = rows.first {
            let (table, start) = side(first)
            if start == 0 && table.count == rows.count {
                _ = keys.initialize(from: table.keyHashes)
                return
            }
        }
        for index in rows.indices { keys[index] = identityKey(of: rows[index]) }
    }

    func identitiesEqual(_ lhs: Int32, _ rhs: Int32) -> Bool {
        let (left, leftIndex) = side(lhs), (right, rightIndex) = side(rhs)
        let a = left.key(leftIndex), b = right.key(rightIndex)
        return a.count == b.count && (a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
    }

    func contentsEqual(_ lhs: Int32, _ rhs: Int32) -> Bool {
        contentHash(of: lhs) == contentHash(of: rhs)
    }

    func contentHash(of row: Int32) -> UInt64 {
        let (rows, index) = side(row)
        return rows.contentHashes[index]
    }

    func identityDescription(of row: Int32) -> String {
        let (rows, index) = side(row)
        return String(decoding: rows.key(index), as: UTF8.self)
    }

    func writeSeededIdentityKeys(of rows: UnsafeBufferPointer<Int32>, to keys: UnsafeMutableBufferPointer<UInt64>) -> Bool {
        precondition(rows.count == keys.count, "one key a row")
        for index in rows.indices {
            let (table, row) = side(rows[index])
            var hasher = Hasher()
            hasher.combine(bytes: UnsafeRawBufferPointer(table.key(row)))
            keys[index] = UInt64(bitPattern: Int64(hasher.finalize()))
        }
        return true
    }
}

/// What the command compares and how.
public struct TableDiffRequest: Sendable {
    public var oldPath: String
    public var newPath: String
    public var keys: [String]
    /// nil: from the extensions.
    public var format: TableFormat?
    public var delimiter: UInt8?
    public var moves: MoveMode = .minimal
    public var duplicates: DuplicatePolicy = .pairInOrder
    public var ignoreOrder = false
    public var renames: [(String, String)] = []
    public var only: [String]?
    public var ignore: [String] = []
    public var columnChangesAreUpdates = false
    public var partition: (index: Int, count: Int)?
    public var showProgress = false

    public init(oldPath: String, newPath: String, keys: [String]) {
        self.oldPath = oldPath
        self.newPath = newPath
        self.keys = keys
    }
}

/// A diffed table pair: the rows as read, the column plan, and the changes in terms of
/// the kept rows (`TableRows` indexes).
public struct TableDiff {
    public var old: TableRows
    public var new: TableRows
    public var oldFile: InputFile
    public var newFile: InputFile
    public var oldFormat: TableFormat
    public var newFormat: TableFormat
    /// Delimited files only.
    public var columns: ColumnPlan?
    /// The engine's changeset; with `first`, its indexes count the deduplicated rows.
    public var changes: Changeset
    /// Kept-row index of each deduplicated old / new row.
    public var oldRowOf: [Int]
    public var newRowOf: [Int]

    /// Whether anything differs: rows or columns.
    public var hasDifferences: Bool {
        changes.hasChanges || !(columns?.added.isEmpty ?? true) || !(columns?.removed.isEmpty ?? true)
            || !(columns?.renamed.isEmpty ?? true)
    }

    /// Reads both files and diffs them.
    public static func run(_ request: TableDiffRequest) throws(InputError) -> TableDiff {
        guard !request.keys.isEmpty else { throw InputError(file: "--key", line: nil, message: "name at least one key column") }
        if request.oldPath == "-" && request.newPath == "-" {
            throw InputError(file: "-", line: nil, message: "standard input can be only one of the two files")
        }
        func format(of path: String) throws(InputError) -> TableFormat {
            if let chosen = request.format { return chosen }
            if let known = TableFormat(path: path) { return known }
            // A stream (`-`, `<(…)`) takes the format of the other file when that one tells.
            if let other = TableFormat(path: path == request.oldPath ? request.newPath : request.oldPath) { return other }
            throw InputError(file: path == "-" ? "standard input" : path, line: nil,
                             message: "cannot tell the format from the name; use --format csv, tsv or --input jsonl")
        }
        var oldFormat = try format(of: request.oldPath), newFormat = try format(of: request.newPath)
        if let delimiter = request.delimiter {
            guard oldFormat != .jsonLines && newFormat != .jsonLines else {
                throw InputError(file: "--delimiter", line: nil, message: "JSON Lines files have no delimiter")
            }
            oldFormat = .delimited(delimiter: delimiter)
            newFormat = .delimited(delimiter: delimiter)
        }
        guard (oldFormat == .jsonLines) == (newFormat == .jsonLines) else {
            throw InputError(file: request.newPath, line: nil, message: "one file is JSON Lines and the other is not")
        }
        let oldFile = try InputFile(path: request.oldPath)
        let newFile = try InputFile(path: request.newPath)
        let reader = TableReader(partition: request.partition)
        let total = oldFile.size + newFile.size
        var progressLine: ProgressLine?
        if request.showProgress && total > 100_000_000 && isatty(STDERR_FILENO) != 0 {
            progressLine = ProgressLine(total: total)
        }
        defer { progressLine?.finish() }

        var old: TableRows, new: TableRows, plan: ColumnPlan?
        switch (oldFormat, newFormat) {
        case (.delimited(let oldDelimiter), .delimited(let newDelimiter)):
            let oldHeader = try TableReader.header(of: oldFile, delimiter: oldDelimiter)
            let newHeader = try TableReader.header(of: newFile, delimiter: newDelimiter)
            let columns = try ColumnPlan(old: oldHeader, oldName: oldFile.name, new: newHeader, newName: newFile.name,
                                         keys: request.keys, renames: request.renames, only: request.only,
                                         ignore: request.ignore, columnChangesAreUpdates: request.columnChangesAreUpdates)
            plan = columns
            (old, new) = try readBoth(reader, progressLine, oldFile, newFile) { reader, file, isOld throws(InputError) in
                try reader.readDelimited(file, delimiter: isOld ? oldDelimiter : newDelimiter,
                                         headerCount: isOld ? oldHeader.count : newHeader.count,
                                         keys: isOld ? columns.oldKeys : columns.newKeys,
                                         columns: isOld ? columns.oldColumns : columns.newColumns, canonicalDelimiter: oldDelimiter)
            }
        default:
            if !request.renames.isEmpty {
                throw InputError(file: "--rename", line: nil, message: "renames apply to CSV and TSV columns")
            }
            (old, new) = try readBoth(reader, progressLine, oldFile, newFile) { reader, file, _ throws(InputError) in
                try reader.readJSONLines(file, keys: request.keys, only: request.only, ignore: request.ignore)
            }
            plan = nil
        }
        progressLine?.update(done: total, of: "diffing")

        let oldRows = (0..<Int32(old.count)).map { $0 }
        let newRows = (Int32(old.count)..<Int32(old.count + new.count)).map { $0 }
        // Unordered tables: pair and compare without looking for moves.
        let moves: MoveMode = request.ignoreOrder || request.partition != nil ? .displaced : request.moves
        let outcome = SideView.with(old) { oldView in
            SideView.with(new) { newView in
                Result { () throws(DuplicateIdentityError) in
                    try diff(oldRows, newRows, using: TableRowAdapter(old: oldView, new: newView),
                             options: DiffOptions(moves: moves, duplicates: request.duplicates))
                }
            }
        }
        var changes: Changeset
        switch outcome {
        case .success(let result):
            changes = result
        case .failure(let error):
            let rows = error.side == .old ? old : new
            let key = readableKey(rows.key(error.secondIndex), format: oldFormat, keyCount: request.keys.count)
            throw InputError(file: rows.name, line: Int(rows.lines[error.secondIndex]),
                             message: "duplicate key \(key) (first at line \(rows.lines[error.firstIndex]))")
        }
        if request.ignoreOrder || request.partition != nil {
            changes = Changeset(oldCount: changes.oldCount, newCount: changes.newCount, deletions: changes.deletions,
                                insertions: changes.insertions, updates: changes.updates, moves: [],
                                droppedOld: changes.droppedOld, droppedNew: changes.droppedNew)
        }
        func kept(_ count: Int, dropped: [Int]?) -> [Int] {
            guard let dropped, !dropped.isEmpty else { return Array(0..<count) }
            let droppedSet = Set(dropped)
            return (0..<count).filter { !droppedSet.contains($0) }
        }
        return TableDiff(old: old, new: new, oldFile: oldFile, newFile: newFile, oldFormat: oldFormat, newFormat: newFormat,
                         columns: plan, changes: changes,
                         oldRowOf: kept(old.count, dropped: changes.droppedOld), newRowOf: kept(new.count, dropped: changes.droppedNew))
    }
}

/// Files smaller than this together are read one after the other on the calling thread:
/// parsing them takes about as long as starting a thread and waiting for it.
private let readAtOnceBelow = 64 << 10

/// Reads the two files at once, one on another thread (the machine's second core does half
/// the parsing); the old file's progress drives the progress line.
private func readBoth(
    _ reader: TableReader, _ progressLine: ProgressLine?, _ oldFile: InputFile, _ newFile: InputFile,
    _ read: @escaping (TableReader, InputFile, Bool) throws(InputError) -> TableRows
) throws(InputError) -> (TableRows, TableRows) {
    if oldFile.size + newFile.size < readAtOnceBelow {
        return (try read(reader, oldFile, true), try read(reader, newFile, false))
    }
    var oldReader = reader
    oldReader.progress = progressLine.map { line in { line.update(done: $0 * 2, of: "\(oldFile.name) and \(newFile.name)") } }
    let newResult = UncheckedBox<Result<TableRows, InputError>?>(nil)
    let job = UncheckedBox((reader, newFile, read))
    let done = DispatchSemaphore(value: 0)
    let worker = Thread {
        let (newReader, file, read) = job.value
        newResult.value = Result { () throws(InputError) in try read(newReader, file, false) }
        done.signal()
    }
    worker.start()
    let oldResult = Result { () throws(InputError) in try read(oldReader, oldFile, true) }
    done.wait()
    let old = try oldResult.get()
    return (old, try newResult.value!.get())
}

/// Hands a value from one thread to another that waits for it.
private final class UncheckedBox<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}

/// A row's key for people: its key fields' text (delimited) or values as JSON (JSON Lines).
func readableKey(_ bytes: ArraySlice<UInt8>, format: TableFormat, keyCount: Int) -> String {
    format == .jsonLines ? ReadableKey.json(bytes) : ReadableKey.csv(bytes, columns: keyCount)
}

/// "diffengine: reading old.csv 42%" on a terminal's stderr, rewritten in place.
final class ProgressLine {
    let total: Int
    init(total: Int) { self.total = total }

    func update(done: Int, of what: String) {
        let percent = total > 0 ? min(100, done * 100 / total) : 100
        let text = what == "diffing" ? "\rdiffengine: diffing…\u{1B}[K" : "\rdiffengine: reading \(what) \(percent)%\u{1B}[K"
        FileHandle.standardError.write(Data(text.utf8))
    }

    func finish() {
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}
