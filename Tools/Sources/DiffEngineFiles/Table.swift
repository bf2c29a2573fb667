import DiffEngine
import Foundation

/// How a table file is written.
public enum TableFormat: Equatable, Sendable {
    /// RFC 4180 text with a header line, fields separated by `delimiter` (`,` for CSV,
    /// a tab for TSV).
    case delimited(delimiter: UInt8)
    /// JSON Lines: one JSON object a line.
    case jsonLines

    /// CSV.
    public static let csv = TableFormat.delimited(delimiter: UInt8(ascii: ","))
    /// Tab-separated values.
    public static let tsv = TableFormat.delimited(delimiter: 0x09)

    /// The format a path's extension names (`.csv`, `.tsv`/`.tab`, `.jsonl`/`.ndjson`).
    public init?(path: String) {
        switch (path as NSString).pathExtension.lowercased() {
        case "csv": self = .csv
        case "tsv", "tab": self = .tsv
        case "jsonl", "ndjson": self = .jsonLines
        default: return nil
        }
    }
}

/// The rows of one side, as the diff needs them and no more: each row's identity bytes
/// (exact), its identity hash, a hash of its compared content keyed by a per-process
/// secret, and where it is in the file. The rows' text stays in the file; the output
/// reads the rows it shows again by offset. About 36 bytes a row plus its key.
public struct TableRows: Sendable {
    /// The file's name for messages.
    public var name: String
    /// XXH3-64 of each row's identity bytes: stable across processes (partitions use it).
    public var keyHashes: [UInt64] = []
    /// Each row's content hash (see `TableReader.contentSeed`).
    public var contentHashes: [UInt64] = []
    /// Identity bytes of all rows, back to back; row i's are `keyBytes[keyStart(i)..<keyEnds[i]]`.
    public var keyBytes: [UInt8] = []
    /// Where each row's identity bytes end.
    public var keyEnds: [Int] = []
    /// The file offset of each row's first byte.
    public var offsets: [Int] = []
    /// The 1-based line where each row starts.
    public var lines: [Int32] = []
    /// Each row's 0-based position among the file's rows (it differs from the index here
    /// when a partition keeps only some rows).
    public var fileRows: [Int32] = []
    /// How many rows the file has in all.
    public var fileRowCount = 0

    /// Empty rows of file `name`.
    public init(name: String) {
        self.name = name
    }

    /// How many rows were kept.
    public var count: Int { offsets.count }

    /// Makes room for about `rows` rows (a guess from the file's size).
    mutating func reserveCapacity(_ rows: Int) {
        keyHashes.reserveCapacity(rows)
        contentHashes.reserveCapacity(rows)
        keyEnds.reserveCapacity(rows)
        offsets.reserveCapacity(rows)
        lines.reserveCapacity(rows)
        fileRows.reserveCapacity(rows)
    }

    /// Where row `index`'s identity bytes start.
    @inlinable
    public func keyStart(_ index: Int) -> Int { index == 0 ? 0 : keyEnds[index - 1] }

    /// Row `index`'s identity bytes.
    public func key(_ index: Int) -> ArraySlice<UInt8> { keyBytes[keyStart(index)..<keyEnds[index]] }
}

/// Which columns two delimited files are compared on: matched by name whatever their order.
public struct ColumnPlan: Sendable {
    /// Names of the columns compared, in the old file's order (renamed ones under their old
    /// name), then added ones when they count.
    public var compared: [String]
    /// For each compared column, its index in the old file (nil: not there).
    public var oldColumns: [Int?]
    /// For each compared column, its index in the new file.
    public var newColumns: [Int?]
    /// The key columns' indexes in each file.
    public var oldKeys: [Int], newKeys: [Int]
    /// Columns only the old file has, only the new file has, and renamed ones (old, new).
    public var removed: [String], added: [String], renamed: [(old: String, new: String)]
    /// The header names of each file.
    public var oldHeader: [String], newHeader: [String]

    /// Plans the comparison of two headers.
    /// - Parameters:
    ///   - keys: the key columns (old names).
    ///   - renames: old name → new name.
    ///   - only: compare only these columns (nil: all shared ones).
    ///   - ignore: leave these columns out.
    ///   - columnChangesAreUpdates: compare added and removed columns too, so that a row
    ///     is updated when it gains or loses a value.
    /// - Throws: `InputError` naming the file that lacks a named column.
    public init(old: [String], oldName: String, new: [String], newName: String, keys: [String],
                renames: [(String, String)], only: [String]?, ignore: [String],
                columnChangesAreUpdates: Bool) throws(InputError) {
        oldHeader = old
        newHeader = new
        var newNameFor: [String: String] = [:]
        for (from, to) in renames {
            guard old.contains(from) else { throw InputError(file: oldName, line: 1, message: "no column '\(from)' to rename") }
            guard new.contains(to) else { throw InputError(file: newName, line: 1, message: "no column '\(to)' (the new name of '\(from)')") }
            newNameFor[from] = to
        }
        let renamedTo = Set(newNameFor.values)
        func newIndex(ofOld name: String) -> Int? {
            if let target = newNameFor[name] { return new.firstIndex(of: target) }
            return renamedTo.contains(name) ? nil : new.firstIndex(of: name)
        }
        let oldOfNew: [String: String] = Dictionary(uniqueKeysWithValues: newNameFor.map { ($1, $0) })
        renamed = old.compactMap { name in newNameFor[name].map { (name, $0) } }
        removed = old.filter { newIndex(ofOld: $0) == nil }
        added = new.filter { name in
            let asOld = oldOfNew[name] ?? name
            return oldOfNew[name] == nil && (!old.contains(asOld) || newNameFor[asOld] != nil)
        }
        oldKeys = []
        newKeys = []
        for key in keys {
            guard let oldIndex = old.firstIndex(of: key) else {
                throw InputError(file: oldName, line: 1, message: "no key column '\(key)' in the header")
            }
            guard let newIndex = newIndex(ofOld: key) else {
                throw InputError(file: newName, line: 1, message: "no key column '\(newNameFor[key] ?? key)' in the header")
            }
            oldKeys.append(oldIndex)
            newKeys.append(newIndex)
        }
        // Names given to --only and --ignore may be old or new names.
        func asOldName(_ name: String) -> String { oldOfNew[name] ?? name }
        for name in (only ?? []) + ignore where !old.contains(asOldName(name)) && !new.contains(name) {
            throw InputError(file: "--\(ignore.contains(name) ? "ignore" : "only")", line: nil,
                             message: "no column '\(name)' in either file")
        }
        let onlySet = only.map { Set($0.map(asOldName)) }
        let ignoreSet = Set(ignore.map(asOldName))
        func counts(_ oldName: String) -> Bool {
            !ignoreSet.contains(oldName) && (onlySet?.contains(oldName) ?? true)
        }
        compared = []
        oldColumns = []
        newColumns = []
        for (index, name) in old.enumerated() where counts(name) {
            let inNew = newIndex(ofOld: name)
            guard inNew != nil || columnChangesAreUpdates else { continue }
            compared.append(name)
            oldColumns.append(index)
            newColumns.append(inNew)
        }
        if columnChangesAreUpdates {
            for name in added where counts(name) {
                compared.append(name)
                oldColumns.append(nil)
                newColumns.append(new.firstIndex(of: name))
            }
        }
        let ignoredNames = Set(ignore)
        removed.removeAll { ignoredNames.contains($0) || !(onlySet?.contains($0) ?? true) }
        added.removeAll { ignoredNames.contains($0) || !(onlySet?.contains(asOldName($0)) ?? true) }
    }

    /// Whether the file's own field order is the compared order (no re-encoding needed).
    public func isIdentity(_ columns: [Int?], headerCount: Int) -> Bool {
        columns.count == headerCount && columns.enumerated().allSatisfy { $0.element == $0.offset }
    }
}

/// Builds `TableRows` by streaming a file once.
public struct TableReader {
    /// The secret that keys content hashes, drawn once per process: a file's author cannot
    /// make two different rows hash alike without it.
    public static let contentSeed = UInt64.random(in: .min ... .max)

    /// Keep only rows whose key hash falls in partition `index` of `count` (nil: all rows).
    public var partition: (index: Int, count: Int)?
    /// Called with the bytes read so far, now and then (for a progress line).
    public var progress: ((Int) -> Void)?
    /// How many bytes the reading window starts with (it doubles for longer records); the
    /// fuzzers make it tiny so that records straddle window boundaries.
    public var windowCapacity = 4 << 20

    /// A reader.
    public init(partition: (index: Int, count: Int)? = nil) {
        self.partition = partition
    }

    /// Whether a row with this key hash belongs to the partition.
    @inlinable
    public func keeps(_ keyHash: UInt64) -> Bool {
        guard let partition else { return true }
        return Int(keyHash.multipliedFullWidth(by: UInt64(partition.count)).high) == partition.index
    }

    /// Reads the header of a delimited file: its column names.
    /// - Throws: `InputError` for an empty file, bad CSV, invalid UTF-8 or a repeated name.
    public static func header(of file: InputFile, delimiter: UInt8, windowCapacity: Int = 64 << 10) throws(InputError) -> [String] {
        var window = FileWindow(file: file, offset: file.start, capacity: windowCapacity)
        var fields: [CSVFieldSpan] = []
        let scanner = CSVScanner(delimiter: delimiter)
        var names: [String] = []
        var line = 1
        try forEachRecord(&window, scanner: scanner, fields: &fields, line: &line) { (buffer, fields, _, _) throws(InputError) in
            for field in fields {
                let value = field.value(in: buffer)
                names.append(String(decoding: value, as: UTF8.self))
            }
            return false
        }
        guard !names.isEmpty else { throw InputError(file: file.name, line: 1, message: "empty file: expected a header line") }
        var seen = Set<String>()
        for name in names where !seen.insert(name).inserted {
            throw InputError(file: file.name, line: 1, message: "column '\(name)' appears twice in the header")
        }
        return names
    }

    /// Streams the records of a delimited file after its header into `TableRows`.
    /// - Parameters:
    ///   - columns: for each compared column, its index in this file (nil: absent).
    ///   - keys: the key columns' indexes.
    ///   - headerCount: how many fields every record has.
    ///   - canonicalDelimiter: the delimiter content is encoded with, the same for both
    ///     files, so that a CSV and a TSV of the same table compare equal.
    public func readDelimited(_ file: InputFile, delimiter: UInt8, headerCount: Int, keys: [Int],
                              columns: [Int?], canonicalDelimiter: UInt8) throws(InputError) -> TableRows {
        var rows = TableRows(name: file.name)
        var window = FileWindow(file: file, offset: file.start, capacity: windowCapacity)
        var fields: [CSVFieldSpan] = []
        let scanner = CSVScanner(delimiter: delimiter), canonical = CSVScanner(delimiter: canonicalDelimiter)
        let raw = delimiter == canonicalDelimiter && columns.count == headerCount
            && columns.enumerated().allSatisfy { $0.element == $0.offset }
        var line = 1
        var isHeader = true
        var scratch: [UInt8] = [], value: [UInt8] = []
        let seed = TableReader.contentSeed
        rows.reserveCapacity(file.size / 64)
        var nextProgress = 64 << 20
        try TableReader.forEachRecord(&window, scanner: scanner, fields: &fields, line: &line) { (buffer, fields, offset, recordLine) throws(InputError) in
            if isHeader {
                isHeader = false
                return true
            }
            guard fields.count == headerCount else {
                throw InputError(file: file.name, line: recordLine, message: "expected \(headerCount) fields, found \(fields.count)")
            }
            let fileRow = rows.fileRowCount
            rows.fileRowCount += 1
            if let progress, offset >= nextProgress {
                progress(offset)
                nextProgress = offset + (64 << 20)
            }
            // Identity: one unquoted key is its own bytes; else values, several length-prefixed.
            let keyHash: UInt64
            let keyStart = rows.keyBytes.count
            if keys.count == 1 && !fields[keys[0]].quoted {
                let span = UnsafeRawBufferPointer(rebasing: buffer[fields[keys[0]].start..<fields[keys[0]].end])
                keyHash = stableHash(bytes: span)
                guard keeps(keyHash) else { return true }
                rows.keyBytes.append(contentsOf: span)
            } else {
                for key in keys {
                    value.removeAll(keepingCapacity: true)
                    fields[key].appendValue(from: buffer, to: &value)
                    if keys.count > 1 {
                        withUnsafeBytes(of: UInt32(value.count).littleEndian) { rows.keyBytes.append(contentsOf: $0) }
                    }
                    rows.keyBytes.append(contentsOf: value)
                }
                keyHash = rows.keyBytes[keyStart...].withUnsafeBytes { stableHash(bytes: $0) }
                guard keeps(keyHash) else {
                    rows.keyBytes.removeSubrange(keyStart...)
                    return true
                }
            }
            // Content: the compared values in the compared order, minimally quoted.
            let contentHash: UInt64
            if raw && !fields.contains(where: \.quoted) {
                contentHash = stableHash(bytes: UnsafeRawBufferPointer(rebasing: buffer[fields[0].start..<fields[fields.count - 1].end]), seed: seed)
            } else {
                scratch.removeAll(keepingCapacity: true)
                for (position, column) in columns.enumerated() {
                    if position > 0 { scratch.append(canonicalDelimiter) }
                    guard let column else {
                        scratch.append(UInt8(ascii: "\"")) // absent: a lone quote, which no value encodes to
                        continue
                    }
                    let field = fields[column]
                    if field.escapedQuotes || field.quoted {
                        value.removeAll(keepingCapacity: true)
                        field.appendValue(from: buffer, to: &value)
                        value.withUnsafeBytes { canonical.appendField($0, to: &scratch) }
                    } else if delimiter == canonicalDelimiter {
                        scratch.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[field.start..<field.end]))
                    } else {
                        canonical.appendField(UnsafeRawBufferPointer(rebasing: buffer[field.start..<field.end]), to: &scratch)
                    }
                }
                contentHash = scratch.withUnsafeBytes { stableHash(bytes: $0, seed: seed) }
            }
            rows.keyHashes.append(keyHash)
            rows.contentHashes.append(contentHash)
            rows.keyEnds.append(rows.keyBytes.count)
            rows.offsets.append(offset)
            rows.lines.append(Int32(truncatingIfNeeded: recordLine))
            rows.fileRows.append(Int32(truncatingIfNeeded: fileRow))
            return true
        }
        return rows
    }

    /// Calls `body` with each record's fields, its file offset and its first line, until
    /// `body` returns false; checks UTF-8 on the way.
    static func forEachRecord(
        _ window: inout FileWindow, scanner: CSVScanner, fields: inout [CSVFieldSpan], line: inout Int,
        _ body: (UnsafeRawBufferPointer, [CSVFieldSpan], Int, Int) throws(InputError) -> Bool
    ) throws(InputError) {
        try window.fill(from: window.offset)
        var position = 0
        var validatedTo = 0 // window-relative: bytes before it are valid UTF-8
        var batchFoundInvalid = false // a bad byte lies at validatedTo: check record by record
        while true {
            let buffer = UnsafeRawBufferPointer(rebasing: window.bytes[0..<window.count])
            if validatedTo <= position && !batchFoundInvalid {
                // Check UTF-8 up to the window's last line break (never inside a sequence) at
                // once. A bad byte is reported with its record, after any error before it.
                var limit = buffer.count
                if !window.atEnd {
                    while limit > position && buffer[limit - 1] != 0x0A { limit -= 1 }
                }
                if let bad = firstInvalidUTF8Byte(in: UnsafeRawBufferPointer(rebasing: buffer[position..<limit])) {
                    validatedTo = position + bad
                    batchFoundInvalid = true
                } else {
                    validatedTo = limit
                }
            }
            let result: CSVScanResult
            do throws(CSVSyntaxError) {
                result = try scanner.scan(buffer, from: position, atEnd: window.atEnd, fields: &fields)
            } catch {
                throw InputError(file: window.file.name, line: line + error.lineOffset, message: error.message)
            }
            switch result {
            case .end:
                return
            case .incomplete:
                // Slide the record to the window's start; a record as wide as the window doubles it.
                try window.fill(from: window.offset + position, minimum: position == 0 ? window.bytes.count * 2 : 0)
                position = 0
                validatedTo = 0
                batchFoundInvalid = false
            case .blank(let next):
                line += 1
                position = next
            case .record(let next, let lines):
                if next > validatedTo {
                    let from = max(validatedTo, position)
                    if let bad = firstInvalidUTF8Byte(in: UnsafeRawBufferPointer(rebasing: buffer[from..<next])) {
                        let breaks = buffer[position..<from + bad].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
                        throw InputError(file: window.file.name, line: line + breaks, message: "invalid UTF-8")
                    }
                    validatedTo = next
                }
                guard try body(buffer, fields, window.offset + position, line) else { return }
                line += lines
                position = next
            }
        }
    }

    /// Streams the objects of a JSON Lines file into `TableRows`: identity is the key
    /// members' values; content is the object by value, without the members `ignore`
    /// names or outside `only`.
    public func readJSONLines(_ file: InputFile, keys: [String], only: [String]?, ignore: [String]) throws(InputError) -> TableRows {
        var rows = TableRows(name: file.name)
        var window = FileWindow(file: file, offset: file.start, capacity: windowCapacity)
        try window.fill(from: file.start)
        let keyNames = keys.map { Array($0.utf8) }
        let onlyNames = only.map { Set($0.map { Array($0.utf8) }) }
        let ignoreNames = Set(ignore.map { Array($0.utf8) })
        let filters = onlyNames != nil || !ignoreNames.isEmpty
        let seed = TableReader.contentSeed
        var position = 0
        var line = 1
        var scratch: [UInt8] = []
        var members: [CanonicalMember] = []
        var encoder = CanonicalJSONEncoder()
        rows.reserveCapacity(file.size / 128)
        var nextProgress = 64 << 20
        while true {
            let buffer = UnsafeRawBufferPointer(rebasing: window.bytes[0..<window.count])
            guard position < buffer.count else {
                if window.atEnd { break }
                try window.fill(from: window.offset + position)
                position = 0
                continue
            }
            let newline = memchr(buffer.baseAddress! + position, 0x0A, buffer.count - position)
                .map { UnsafeRawPointer($0) - buffer.baseAddress! }
            guard let lineEnd = newline ?? (window.atEnd ? buffer.count : nil) else {
                try window.fill(from: window.offset + position, minimum: position == 0 ? window.bytes.count * 2 : 0)
                position = 0
                continue
            }
            let offset = window.offset + position
            if let progress, offset >= nextProgress {
                progress(offset)
                nextProgress = offset + (64 << 20)
            }
            var textEnd = lineEnd
            if textEnd > position && buffer[textEnd - 1] == 0x0D { textEnd -= 1 }
            let text = UnsafeRawBufferPointer(rebasing: buffer[position..<textEnd])
            if text.contains(where: { $0 != 0x20 && $0 != 0x09 }) {
                do throws(JSONSyntaxError) {
                    try encoder.encode(text)
                } catch {
                    let message = error.message == "invalid UTF-8" ? "invalid UTF-8" : "invalid JSON at column \(error.offset + 1): \(error.message)"
                    throw InputError(file: file.name, line: line, message: message)
                }
                let canonical = encoder.encoded
                guard canonical.first == UInt8(ascii: "{"), CanonicalMember.members(of: canonical[...], into: &members) != nil else {
                    throw InputError(file: file.name, line: line, message: "expected a JSON object")
                }
                let fileRow = rows.fileRowCount
                rows.fileRowCount += 1
                let keyStart = rows.keyBytes.count
                let outcome = canonical.withUnsafeBytes { bytes in Result { () throws(InputError) -> Bool in
                    func name(_ member: CanonicalMember) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[member.name]) }
                    for key in keyNames {
                        guard let member = members.first(where: { name($0).elementsEqual(key) }) else {
                            throw InputError(file: file.name, line: line, message: "no key '\(String(decoding: key, as: UTF8.self))'")
                        }
                        rows.keyBytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[member.value]))
                    }
                    let keyHash = rows.keyBytes[keyStart...].withUnsafeBytes { stableHash(bytes: $0) }
                    guard keeps(keyHash) else { return false }
                    let contentHash: UInt64
                    if filters {
                        scratch.removeAll(keepingCapacity: true)
                        scratch.append(UInt8(ascii: "{"))
                        for member in members {
                            let memberName = Array(name(member))
                            guard !ignoreNames.contains(memberName), onlyNames?.contains(memberName) ?? true else { continue }
                            scratch.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[member.whole]))
                        }
                        scratch.append(UInt8(ascii: "}"))
                        contentHash = scratch.withUnsafeBytes { stableHash(bytes: $0, seed: seed) }
                    } else {
                        contentHash = stableHash(bytes: bytes, seed: seed)
                    }
                    rows.keyHashes.append(keyHash)
                    rows.contentHashes.append(contentHash)
                    return true
                } }
                if try outcome.get() {
                    rows.keyEnds.append(rows.keyBytes.count)
                    rows.offsets.append(offset)
                    rows.lines.append(Int32(truncatingIfNeeded: line))
                    rows.fileRows.append(Int32(truncatingIfNeeded: fileRow))
                } else {
                    rows.keyBytes.removeSubrange(keyStart...)
                }
            }
            line += 1
            position = lineEnd + 1
            if lineEnd == buffer.count && window.atEnd { break }
        }
        return rows
    }
}

/// A top-level member of a canonical JSON object (see `JSONDocuments`): where its name's
/// bytes, its value and the whole member lie.
public struct CanonicalMember: Sendable {
    /// The member name's UTF-8 bytes.
    public var name: Range<Int>
    /// The member's canonical value.
    public var value: Range<Int>
    /// The name's encoding and the value.
    public var whole: Range<Int>

    /// Lists the members of the canonical object `bytes` (sorted by name, as encoded);
    /// nil when `bytes` is not a canonical object.
    public static func members(of bytes: ArraySlice<UInt8>, into members: inout [CanonicalMember]) -> Int? {
        members.removeAll(keepingCapacity: true)
        let base = bytes.startIndex
        return bytes.withUnsafeBytes { raw -> Int? in
            var index = 0
            guard index < raw.count, raw[index] == UInt8(ascii: "{") else { return nil }
            index += 1
            while index < raw.count && raw[index] == UInt8(ascii: "s") {
                let start = index
                guard let nameEnd = skipValue(in: raw, index), let valueEnd = skipValue(in: raw, nameEnd) else { return nil }
                members.append(CanonicalMember(name: base + start + 5..<base + nameEnd, value: base + nameEnd..<base + valueEnd,
                                               whole: base + start..<base + valueEnd))
                index = valueEnd
            }
            guard index < raw.count, raw[index] == UInt8(ascii: "}") else { return nil }
            return members.count
        }
    }

    /// Where the canonical value starting at `index` ends.
    public static func skipValue(_ bytes: ArraySlice<UInt8>, _ start: Int) -> Int? {
        bytes.withUnsafeBytes { skipValue(in: $0, start - bytes.startIndex) }.map { $0 + bytes.startIndex }
    }

    /// `skipValue` over the bytes themselves (offsets from their start): a row's members are
    /// found once a row, so the walk works on the bytes, not through the array.
    static func skipValue(in bytes: UnsafeRawBufferPointer, _ start: Int) -> Int? {
        var index = start
        var depth = 0
        repeat {
            guard index < bytes.count else { return nil }
            let kind = bytes[index]
            index += 1
            switch kind {
            case UInt8(ascii: "n"), UInt8(ascii: "t"), UInt8(ascii: "f"):
                break
            case UInt8(ascii: "s"):
                guard bytes.count - index >= 4 else { return nil }
                let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt32.self)))
                index += 4
                guard bytes.count - index >= length else { return nil }
                index += length
            case UInt8(ascii: "d"):
                guard let end = bytes[index...].firstIndex(of: UInt8(ascii: ";")) else { return nil }
                index = end + 1
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth -= 1
                guard depth >= 0 else { return nil }
            default:
                return nil
            }
        } while depth > 0
        return index
    }
}
