import DiffEngine
import DiffEngineFiles
import Foundation

/// Where output goes: standard output in large writes, or memory (for tests).
struct OutputSink {
    private(set) var bytes: [UInt8] = []
    let toMemory: Bool

    /// `capacity`: bytes reserved at once (standard output is written a mebibyte at a time).
    init(toMemory: Bool, capacity: Int = 1 << 20) {
        self.toMemory = toMemory
        bytes.reserveCapacity(capacity)
    }

    mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    mutating func append(_ raw: some Sequence<UInt8>) { bytes.append(contentsOf: raw) }

    mutating func append(_ raw: UnsafeRawBufferPointer) { bytes.append(contentsOf: raw) }

    mutating func append(byte: UInt8) { bytes.append(byte) }

    /// A canonical JSON value (see `JSONDocuments`) as JSON text, as `ReadableKey.json`
    /// prints it.
    mutating func appendReadableJSON(_ canonical: ArraySlice<UInt8>) { ReadableKey.appendJSON(canonical, to: &bytes) }

    /// `value` in decimal, without going through a `String`.
    mutating func append(decimal value: some BinaryInteger) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = UInt64(value.magnitude)
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0) // room for UInt64.max's 20 digits
        withUnsafeMutableBytes(of: &digits) { buffer in
            var start = buffer.count
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[start...]))
        }
    }

    /// A JSON string of `value`'s UTF-8 bytes (valid UTF-8, checked on reading).
    mutating func appendJSONString(_ value: UnsafeRawBufferPointer) { JSONString.append(value, to: &bytes) }

    mutating func appendJSONString(_ value: some Collection<UInt8>) {
        if value.withContiguousStorageIfAvailable({ appendJSONString(UnsafeRawBufferPointer($0)) }) != nil { return }
        appendJSONString(Array(value))
    }

    mutating func appendJSONString(_ text: String) {
        var text = text
        text.withUTF8 { appendJSONString(UnsafeRawBufferPointer($0)) }
    }

    /// Writes what is buffered to standard output once it is large.
    mutating func flushIfLarge() throws(InputError) {
        if !toMemory && bytes.count >= 1 << 20 { try flush() }
    }

    mutating func flush() throws(InputError) {
        guard !toMemory, !bytes.isEmpty else { return }
        try writeToStandardOutput(bytes)
        bytes.removeAll(keepingCapacity: true)
    }
}

/// Reads single rows again, by offset, from a file the table was built from. Rows asked
/// for in file order are served from one sliding window.
final class RecordFetcher {
    private var window: FileWindow
    private let format: TableFormat
    private var fields: [CSVFieldSpan] = []

    init(file: InputFile, format: TableFormat) {
        window = FileWindow(file: file, offset: 0, capacity: 256 << 10)
        self.format = format
    }

    /// The field values of the delimited record at `offset`.
    func values(at offset: Int) throws(InputError) -> [[UInt8]] {
        try withFields(at: offset) { buffer, fields in fields.map { $0.value(in: buffer) } }
    }

    /// `body` of the delimited record at `offset`: the bytes its fields lie in and the fields
    /// (valid only during the call). Writes a row out without a copy of each value.
    func withFields<Result>(at offset: Int, _ body: (UnsafeRawBufferPointer, [CSVFieldSpan]) -> Result) throws(InputError) -> Result {
        guard case .delimited(let delimiter) = format else { return body(UnsafeRawBufferPointer(start: nil, count: 0), []) }
        let scanner = CSVScanner(delimiter: delimiter)
        var minimum = 0
        while true {
            if offset < window.offset || offset >= window.offset + window.count || minimum > 0 {
                try window.fill(from: offset, minimum: minimum)
            }
            let buffer = UnsafeRawBufferPointer(rebasing: window.bytes[0..<window.count])
            let result: CSVScanResult
            do throws(CSVSyntaxError) {
                result = try scanner.scan(buffer, from: offset - window.offset, atEnd: window.atEnd, fields: &fields)
            } catch {
                throw InputError(file: window.file.name, line: nil, message: "the file changed while it was read")
            }
            switch result {
            case .record:
                return body(buffer, fields)
            case .incomplete:
                minimum = max(window.bytes.count * 2, 1)
            case .blank, .end:
                throw InputError(file: window.file.name, line: nil, message: "the file changed while it was read")
            }
        }
    }

    /// The text of the line at `offset` (without its line break).
    func line(at offset: Int) throws(InputError) -> [UInt8] {
        try withLine(at: offset) { Array($0) }
    }

    /// `body` of the text of the line at `offset` (without its line break), valid only
    /// during the call: a row written out whole needs no copy of its own.
    func withLine<Result>(at offset: Int, _ body: (UnsafeRawBufferPointer) -> Result) throws(InputError) -> Result {
        var minimum = 0
        while true {
            if offset < window.offset || offset >= window.offset + window.count || minimum > 0 {
                try window.fill(from: offset, minimum: minimum)
            }
            let start = offset - window.offset
            let rest = UnsafeRawBufferPointer(rebasing: window.bytes[start..<window.count])
            let newline = rest.isEmpty ? nil : memchr(rest.baseAddress!, 0x0A, rest.count).map { UnsafeRawPointer($0) - rest.baseAddress! }
            if let length = newline ?? (window.atEnd ? rest.count : nil) {
                var end = length
                if end > 0 && rest[end - 1] == 0x0D { end -= 1 }
                return body(UnsafeRawBufferPointer(rebasing: rest[0..<end]))
            }
            minimum = max(window.bytes.count * 2, 1)
        }
    }
}

/// The changes as kept-row indexes of each side, in the changeset's orders.
struct ChangeLists {
    var deleted: [Int]
    var inserted: [Int]
    var updated: [(old: Int, new: Int)]
    var moved: [(old: Int, new: Int)]

    init(_ diff: TableDiff) {
        let changes = diff.changes
        deleted = changes.deletions.map { diff.oldRowOf[$0] }
        inserted = changes.insertions.map { diff.newRowOf[$0] }
        updated = changes.updates.map { (diff.oldRowOf[$0.old], diff.newRowOf[$0.new]) }
        moved = changes.moves.map { (diff.oldRowOf[$0.old], diff.newRowOf[$0.new]) }
    }
}

/// One row's values as the output shows them.
enum RowValues {
    /// A delimited record: one value a column of its file.
    case fields([[UInt8]])
    /// A JSON Lines object: its text as written, and its canonical form.
    case object(text: [UInt8], canonical: [UInt8])
}

/// Renders a `TableDiff` in the keyed formats.
struct KeyedRenderer {
    let diff: TableDiff
    let keys: [String]
    let oldFetcher: RecordFetcher
    let newFetcher: RecordFetcher
    let only: [String]?
    let ignore: [String]
    /// `--unchanged`: the keyed formats also list the pairs whose compared values are equal.
    var listUnchanged = false
    /// `--whole-rows`: updated and unchanged entries carry both rows whole.
    var wholeRows = false
    /// Each column of a delimited file as it starts a member of `values`: `"name":`,
    /// written once instead of once a row.
    let oldMemberNames: [[UInt8]], newMemberNames: [[UInt8]]

    init(diff: TableDiff, keys: [String], only: [String]?, ignore: [String]) {
        self.diff = diff
        self.keys = keys
        self.only = only
        self.ignore = ignore
        oldFetcher = RecordFetcher(file: diff.oldFile, format: diff.oldFormat)
        newFetcher = RecordFetcher(file: diff.newFile, format: diff.newFormat)
        func memberNames(_ header: [String]?) -> [[UInt8]] {
            (header ?? []).map { name in
                var out = OutputSink(toMemory: true, capacity: name.utf8.count + 3)
                out.appendJSONString(name)
                out.append(byte: UInt8(ascii: ":"))
                return out.bytes
            }
        }
        oldMemberNames = memberNames(diff.columns?.oldHeader)
        newMemberNames = memberNames(diff.columns?.newHeader)
    }

    var isJSON: Bool { diff.oldFormat == .jsonLines }

    func values(old: Bool, row: Int) throws(InputError) -> RowValues {
        let rows = old ? diff.old : diff.new
        let fetcher = old ? oldFetcher : newFetcher
        if isJSON {
            let text = try fetcher.line(at: rows.offsets[row])
            let canonical = text.withUnsafeBytes { try? canonicalJSON($0) }
            guard let canonical else {
                throw InputError(file: rows.name, line: Int(rows.lines[row]), message: "the file changed while it was read")
            }
            return .object(text: text, canonical: canonical)
        }
        return .fields(try fetcher.values(at: rows.offsets[row]))
    }

    /// The paired rows whose compared values are equal (moved ones among them), by new row.
    ///
    /// The changeset lists only changes, so the pairs are found again: every kept old row
    /// that is neither deleted nor updated pairs with a new row of the same key, and since
    /// the engine pairs the k-th occurrences of a key, so do the rows left after its changes
    /// are taken out. Both sides sorted by (key hash, row) make that one merge; a run of
    /// equal hashes whose keys differ (a collision) is sorted by key bytes first.
    /// O(n log n) whatever the keys.
    func unchangedPairs(_ lists: ChangeLists) -> [(old: Int, new: Int)] {
        func remaining(_ rows: TableRows, kept: [Int], taken: [Int]) -> [(hash: UInt64, row: Int)] {
            var isTaken = [Bool](repeating: false, count: rows.count)
            for row in taken { isTaken[row] = true }
            var result: [(hash: UInt64, row: Int)] = []
            result.reserveCapacity(kept.count - taken.count)
            for row in kept where !isTaken[row] { result.append((rows.keyHashes[row], row)) }
            result.sort { $0.hash != $1.hash ? $0.hash < $1.hash : $0.row < $1.row }
            return result
        }
        let old = remaining(diff.old, kept: diff.oldRowOf, taken: lists.deleted + lists.updated.map(\.old))
        let new = remaining(diff.new, kept: diff.newRowOf, taken: lists.inserted + lists.updated.map(\.new))
        var pairs: [(old: Int, new: Int)] = []
        pairs.reserveCapacity(min(old.count, new.count))
        var i = 0, j = 0
        while i < old.count && j < new.count {
            let hash = old[i].hash
            if hash != new[j].hash {
                if hash < new[j].hash { i += 1 } else { j += 1 }
                continue
            }
            var oldEnd = i + 1, newEnd = j + 1
            while oldEnd < old.count && old[oldEnd].hash == hash { oldEnd += 1 }
            while newEnd < new.count && new[newEnd].hash == hash { newEnd += 1 }
            defer { i = oldEnd; j = newEnd }
            if oldEnd - i == 1 && newEnd - j == 1 { // the usual case: one row a side
                if diff.old.key(old[i].row).elementsEqual(diff.new.key(new[j].row)) { pairs.append((old[i].row, new[j].row)) }
                continue
            }
            var oldRun = old[i..<oldEnd].map(\.row), newRun = new[j..<newEnd].map(\.row)
            let first = diff.old.key(oldRun[0])
            let oneKey = oldRun.allSatisfy { diff.old.key($0).elementsEqual(first) }
                && newRun.allSatisfy { diff.new.key($0).elementsEqual(first) }
            if oneKey {
                for (a, b) in zip(oldRun, newRun) { pairs.append((a, b)) }
            } else {
                // Colliding keys: by bytes, then row, so each key's k-th rows meet.
                func byKey(_ rows: TableRows) -> (Int, Int) -> Bool {
                    { a, b in
                        let left = rows.key(a), right = rows.key(b)
                        return left.elementsEqual(right) ? a < b : left.lexicographicallyPrecedes(right)
                    }
                }
                oldRun.sort(by: byKey(diff.old))
                newRun.sort(by: byKey(diff.new))
                var a = 0, b = 0
                while a < oldRun.count && b < newRun.count {
                    let left = diff.old.key(oldRun[a]), right = diff.new.key(newRun[b])
                    if left.elementsEqual(right) {
                        pairs.append((oldRun[a], newRun[b])); a += 1; b += 1
                    } else if left.lexicographicallyPrecedes(right) { a += 1 } else { b += 1 }
                }
            }
        }
        pairs.sort { $0.new < $1.new }
        return pairs
    }

    /// `{"id": "7"}`: the key columns and their values.
    func appendKey(old: Bool, row: Int, to out: inout OutputSink) {
        let rows = old ? diff.old : diff.new
        let bytes = rows.key(row)
        out.append(byte: UInt8(ascii: "{"))
        if isJSON {
            var index = bytes.startIndex
            for (position, name) in keys.enumerated() {
                if position > 0 { out.append(byte: UInt8(ascii: ",")) }
                out.appendJSONString(name)
                out.append(byte: UInt8(ascii: ":"))
                let end = CanonicalMember.skipValue(bytes, index) ?? bytes.endIndex
                out.appendReadableJSON(bytes[index..<end])
                index = end
            }
        } else {
            for (position, value) in keyValues(bytes).enumerated() {
                if position > 0 { out.append(byte: UInt8(ascii: ",")) }
                out.appendJSONString(keys[position])
                out.append(byte: UInt8(ascii: ":"))
                out.appendJSONString(value)
            }
        }
        out.append(byte: UInt8(ascii: "}"))
    }

    /// The key values of a delimited row.
    func keyValues(_ bytes: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        ReadableKey.keyFields(bytes, columns: keys.count)
    }

    /// The key for people: `id=7` or `id=7, region=eu`.
    func readableKey(old: Bool, row: Int) -> String {
        let rows = old ? diff.old : diff.new
        let bytes = rows.key(row)
        if isJSON {
            var index = bytes.startIndex
            return keys.map { name in
                let end = CanonicalMember.skipValue(bytes, index) ?? bytes.endIndex
                defer { index = end }
                return "\(name)=\(ReadableKey.json(bytes[index..<end]))"
            }.joined(separator: ", ")
        }
        return zip(keys, keyValues(bytes)).map { "\($0)=\(ReadableKey.csv($1, columns: 1))" }.joined(separator: ", ")
    }

    /// `{"id":"1","name":"apple"}`: a row's values under its file's column names, or the
    /// object as written.
    func appendValues(_ values: RowValues, old: Bool, to out: inout OutputSink) {
        switch values {
        case .object(let text, _):
            out.append(text)
        case .fields(let fields):
            let names = old ? oldMemberNames : newMemberNames
            out.append(byte: UInt8(ascii: "{"))
            for (index, value) in fields.enumerated() {
                if index > 0 { out.append(byte: UInt8(ascii: ",")) }
                out.append(names[index])
                out.appendJSONString(value)
            }
            out.append(byte: UInt8(ascii: "}"))
        }
    }

    /// `appendValues` of a row read again from its file: a delimited row's values go from
    /// the file's bytes to the output without a copy each. `checked`: a JSON Lines row is
    /// read as `values(old:row:)` reads it (canonicalized, so a file changed since is
    /// noticed), else as written, straight from the file.
    func appendValues(old: Bool, row: Int, checked: Bool = true, to out: inout OutputSink) throws(InputError) {
        guard !isJSON else {
            guard checked else {
                let rows = old ? diff.old : diff.new
                return try (old ? oldFetcher : newFetcher).withLine(at: rows.offsets[row]) { out.append($0) }
            }
            return appendValues(try values(old: old, row: row), old: old, to: &out)
        }
        let names = old ? oldMemberNames : newMemberNames
        let offset = (old ? diff.old : diff.new).offsets[row]
        var scratch: [UInt8] = []
        try (old ? oldFetcher : newFetcher).withFields(at: offset) { buffer, fields in
            out.append(byte: UInt8(ascii: "{"))
            for (index, field) in fields.enumerated() {
                if index > 0 { out.append(byte: UInt8(ascii: ",")) }
                out.append(names[index])
                if field.escapedQuotes {
                    scratch.removeAll(keepingCapacity: true)
                    field.appendValue(from: buffer, to: &scratch)
                    out.appendJSONString(scratch)
                } else {
                    out.appendJSONString(UnsafeRawBufferPointer(rebasing: buffer[field.start..<field.end]))
                }
            }
            out.append(byte: UInt8(ascii: "}"))
        }
    }

    /// A changed field: its name, and its JSON values on each side (nil: absent there).
    struct FieldChange {
        var name: String
        var old: [UInt8]?
        var new: [UInt8]?
    }

    /// The compared fields whose values differ.
    func fieldChanges(old: RowValues, new: RowValues) -> [FieldChange] {
        switch (old, new) {
        case (.fields(let oldFields), .fields(let newFields)):
            let plan = diff.columns!
            var changes: [FieldChange] = []
            for (position, name) in plan.compared.enumerated() {
                let oldValue = plan.oldColumns[position].map { oldFields[$0] }
                let newValue = plan.newColumns[position].map { newFields[$0] }
                guard oldValue != newValue else { continue }
                let shownName = plan.newColumns[position].map { plan.newHeader[$0] } ?? name
                var oldJSON: [UInt8]?, newJSON: [UInt8]?
                if let oldValue {
                    var out = OutputSink(toMemory: true, capacity: oldValue.count + 2)
                    out.appendJSONString(oldValue)
                    oldJSON = out.bytes
                }
                if let newValue {
                    var out = OutputSink(toMemory: true, capacity: newValue.count + 2)
                    out.appendJSONString(newValue)
                    newJSON = out.bytes
                }
                changes.append(FieldChange(name: shownName, old: oldJSON, new: newJSON))
            }
            return changes
        case (.object(_, let oldCanonical), .object(_, let newCanonical)):
            var oldMembers: [CanonicalMember] = [], newMembers: [CanonicalMember] = []
            _ = CanonicalMember.members(of: oldCanonical[...], into: &oldMembers)
            _ = CanonicalMember.members(of: newCanonical[...], into: &newMembers)
            let onlySet = only.map(Set.init), ignoreSet = Set(ignore)
            var names: [[UInt8]: (old: ArraySlice<UInt8>?, new: ArraySlice<UInt8>?)] = [:]
            for member in oldMembers { names[Array(oldCanonical[member.name]), default: (nil, nil)].old = oldCanonical[member.value] }
            for member in newMembers { names[Array(newCanonical[member.name]), default: (nil, nil)].new = newCanonical[member.value] }
            return names.keys.sorted { $0.lexicographicallyPrecedes($1) }.compactMap { nameBytes in
                let pair = names[nameBytes]!
                let name = String(decoding: nameBytes, as: UTF8.self)
                guard !ignoreSet.contains(name), onlySet?.contains(name) ?? true else { return nil }
                guard pair.old.map(Array.init) != pair.new.map(Array.init) else { return nil }
                func readable(_ value: ArraySlice<UInt8>) -> [UInt8] {
                    var text: [UInt8] = []
                    ReadableKey.appendJSON(value, to: &text)
                    return text
                }
                return FieldChange(name: name, old: pair.old.map(readable), new: pair.new.map(readable))
            }
        default:
            return []
        }
    }

    func appendChanges(_ changes: [FieldChange], to out: inout OutputSink) {
        out.append(byte: UInt8(ascii: "{"))
        for (index, change) in changes.enumerated() {
            if index > 0 { out.append(byte: UInt8(ascii: ",")) }
            out.appendJSONString(change.name)
            out.append(":{")
            if let old = change.old {
                out.append("\"old\":")
                out.append(old)
            }
            if let new = change.new {
                if change.old != nil { out.append(byte: UInt8(ascii: ",")) }
                out.append("\"new\":")
                out.append(new)
            }
            out.append(byte: UInt8(ascii: "}"))
        }
        out.append(byte: UInt8(ascii: "}"))
    }

    /// Old values of the updated rows, read in old-file order once.
    func updatedOldValues(_ lists: ChangeLists) throws(InputError) -> [Int: RowValues] {
        var values: [Int: RowValues] = [:]
        for old in lists.updated.map(\.old).sorted() { values[old] = try self.values(old: true, row: old) }
        return values
    }

    func position(old: Bool, row: Int) -> (line: Int32, fileRow: Int32) {
        let rows = old ? diff.old : diff.new
        return (rows.lines[row], rows.fileRows[row])
    }

    /// The column changes as a JSON object.
    func appendColumns(to out: inout OutputSink) {
        let plan = diff.columns
        out.append("{\"added\":[")
        for (index, name) in (plan?.added ?? []).enumerated() {
            if index > 0 { out.append(byte: UInt8(ascii: ",")) }
            out.appendJSONString(name)
        }
        out.append("],\"removed\":[")
        for (index, name) in (plan?.removed ?? []).enumerated() {
            if index > 0 { out.append(byte: UInt8(ascii: ",")) }
            out.appendJSONString(name)
        }
        out.append("],\"renamed\":[")
        for (index, pair) in (plan?.renamed ?? []).enumerated() {
            if index > 0 { out.append(byte: UInt8(ascii: ",")) }
            out.append("{\"old\":")
            out.appendJSONString(pair.old)
            out.append(",\"new\":")
            out.appendJSONString(pair.new)
            out.append(byte: UInt8(ascii: "}"))
        }
        out.append("]}")
    }

    /// A paired entry (updated or moved) as a JSON object, the body of both `json` and `jsonl`.
    func appendRow(kind: String, old: Int?, new: Int?, changes: [FieldChange]?,
                   whole: (old: RowValues, new: RowValues)? = nil, includeKind: Bool, to out: inout OutputSink) {
        appendRowStart(kind: kind, old: old, new: new, includeKind: includeKind, to: &out)
        if let changes {
            out.append(",\"changes\":")
            appendChanges(changes, to: &out)
        }
        if let whole {
            out.append(",\"oldValues\":")
            appendValues(whole.old, old: true, to: &out)
            out.append(",\"newValues\":")
            appendValues(whole.new, old: false, to: &out)
        }
        out.append(byte: UInt8(ascii: "}"))
    }

    /// A deleted (`old`) or inserted row's entry, its values read again from its file.
    func appendRow(kind: String, old: Bool, row: Int, includeKind: Bool, to out: inout OutputSink) throws(InputError) {
        appendRowStart(kind: kind, old: old ? row : nil, new: old ? nil : row, includeKind: includeKind, to: &out)
        out.append(",\"values\":")
        try appendValues(old: old, row: row, to: &out)
        out.append(byte: UInt8(ascii: "}"))
    }

    /// An entry up to its values: the kind, the key, and the lines and rows.
    func appendRowStart(kind: String, old: Int?, new: Int?, includeKind: Bool, to out: inout OutputSink) {
        out.append(byte: UInt8(ascii: "{"))
        if includeKind {
            out.append("\"change\":\"")
            out.append(kind)
            out.append("\",")
        }
        out.append("\"key\":")
        if let new { appendKey(old: false, row: new, to: &out) } else if let old { appendKey(old: true, row: old, to: &out) }
        if let old, let new {
            let (oldLine, oldRow) = position(old: true, row: old), (newLine, newRow) = position(old: false, row: new)
            out.append(",\"oldLine\":")
            out.append(decimal: oldLine)
            out.append(",\"newLine\":")
            out.append(decimal: newLine)
            out.append(",\"oldRow\":")
            out.append(decimal: oldRow)
            out.append(",\"newRow\":")
            out.append(decimal: newRow)
        } else if let row = old ?? new {
            let (line, fileRow) = position(old: old != nil, row: row)
            out.append(",\"line\":")
            out.append(decimal: line)
            out.append(",\"row\":")
            out.append(decimal: fileRow)
        }
    }

    /// An updated pair's entry: the changed fields, and both rows whole under `--whole-rows`.
    func appendUpdated(_ pair: (old: Int, new: Int), oldValues: RowValues, includeKind: Bool,
                       to out: inout OutputSink) throws(InputError) {
        let newValues = try values(old: false, row: pair.new)
        let fields = fieldChanges(old: oldValues, new: newValues)
        appendRow(kind: "updated", old: pair.old, new: pair.new, changes: fields,
                  whole: wholeRows ? (oldValues, newValues) : nil, includeKind: includeKind, to: &out)
    }

    /// An unchanged pair's entry (`--unchanged`), with both rows whole under `--whole-rows`.
    func appendUnchanged(_ pair: (old: Int, new: Int), includeKind: Bool, to out: inout OutputSink) throws(InputError) {
        appendRowStart(kind: "unchanged", old: pair.old, new: pair.new, includeKind: includeKind, to: &out)
        if wholeRows {
            out.append(",\"oldValues\":")
            try appendValues(old: true, row: pair.old, checked: false, to: &out)
            out.append(",\"newValues\":")
            try appendValues(old: false, row: pair.new, checked: false, to: &out)
        }
        out.append(byte: UInt8(ascii: "}"))
    }

    /// `--format json`: one keyed object (see the CLI documentation for its schema).
    func renderJSON(to out: inout OutputSink) throws(InputError) {
        let lists = ChangeLists(diff)
        let changes = diff.changes
        out.append("{\"old\":{\"file\":")
        out.appendJSONString(diff.old.name)
        out.append(",\"rows\":\(diff.old.fileRowCount)},\"new\":{\"file\":")
        out.appendJSONString(diff.new.name)
        out.append(",\"rows\":\(diff.new.fileRowCount)},\"key\":[")
        for (index, key) in keys.enumerated() {
            if index > 0 { out.append(byte: UInt8(ascii: ",")) }
            out.appendJSONString(key)
        }
        out.append("],\"columns\":")
        appendColumns(to: &out)
        out.append(",\"counts\":{\"deleted\":\(lists.deleted.count),\"inserted\":\(lists.inserted.count),\"updated\":\(lists.updated.count),\"moved\":\(lists.moved.count)}")
        if let droppedOld = changes.droppedOld, let droppedNew = changes.droppedNew {
            out.append(",\"droppedOld\":[\(droppedOld.map { String(diff.old.fileRows[$0]) }.joined(separator: ","))]")
            out.append(",\"droppedNew\":[\(droppedNew.map { String(diff.new.fileRows[$0]) }.joined(separator: ","))]")
        }
        out.append(",\n\"deleted\":[")
        for (index, row) in lists.deleted.enumerated() {
            out.append(index > 0 ? ",\n" : "\n")
            try appendRow(kind: "deleted", old: true, row: row, includeKind: false, to: &out)
            try out.flushIfLarge()
        }
        out.append("],\n\"inserted\":[")
        for (index, row) in lists.inserted.enumerated() {
            out.append(index > 0 ? ",\n" : "\n")
            try appendRow(kind: "inserted", old: false, row: row, includeKind: false, to: &out)
            try out.flushIfLarge()
        }
        out.append("],\n\"updated\":[")
        let oldValues = try updatedOldValues(lists)
        for (index, pair) in lists.updated.enumerated() {
            out.append(index > 0 ? ",\n" : "\n")
            try appendUpdated(pair, oldValues: oldValues[pair.old]!, includeKind: false, to: &out)
            try out.flushIfLarge()
        }
        out.append("],\n\"moved\":[")
        for (index, pair) in lists.moved.enumerated() {
            out.append(index > 0 ? ",\n" : "\n")
            appendRow(kind: "moved", old: pair.old, new: pair.new, changes: nil, includeKind: false, to: &out)
            try out.flushIfLarge()
        }
        if listUnchanged {
            out.append("],\n\"unchanged\":[")
            for (index, pair) in unchangedPairs(lists).enumerated() {
                out.append(index > 0 ? ",\n" : "\n")
                try appendUnchanged(pair, includeKind: false, to: &out)
                try out.flushIfLarge()
            }
        }
        out.append("]}\n")
    }

    /// `--format jsonl`: column changes first, then one change a line, in the `json`
    /// format's order.
    func renderJSONLines(to out: inout OutputSink) throws(InputError) {
        let lists = ChangeLists(diff)
        if let plan = diff.columns {
            for name in plan.added {
                out.append("{\"change\":\"column-added\",\"column\":")
                out.appendJSONString(name)
                out.append("}\n")
            }
            for name in plan.removed {
                out.append("{\"change\":\"column-removed\",\"column\":")
                out.appendJSONString(name)
                out.append("}\n")
            }
            for pair in plan.renamed {
                out.append("{\"change\":\"column-renamed\",\"old\":")
                out.appendJSONString(pair.old)
                out.append(",\"new\":")
                out.appendJSONString(pair.new)
                out.append("}\n")
            }
        }
        for row in lists.deleted {
            try appendRow(kind: "deleted", old: true, row: row, includeKind: true, to: &out)
            out.append(byte: 0x0A)
            try out.flushIfLarge()
        }
        for row in lists.inserted {
            try appendRow(kind: "inserted", old: false, row: row, includeKind: true, to: &out)
            out.append(byte: 0x0A)
            try out.flushIfLarge()
        }
        let oldValues = try updatedOldValues(lists)
        for pair in lists.updated {
            try appendUpdated(pair, oldValues: oldValues[pair.old]!, includeKind: true, to: &out)
            out.append(byte: 0x0A)
            try out.flushIfLarge()
        }
        if listUnchanged {
            for pair in unchangedPairs(lists) {
                try appendUnchanged(pair, includeKind: true, to: &out)
                out.append(byte: 0x0A)
                try out.flushIfLarge()
            }
        }
        for pair in lists.moved {
            appendRow(kind: "moved", old: pair.old, new: pair.new, changes: nil, includeKind: true, to: &out)
            out.append(byte: 0x0A)
            try out.flushIfLarge()
        }
    }

    /// `--format summary`: counts, column changes and the first `limit` of each change.
    func renderSummary(limit: Int, to out: inout OutputSink) throws(InputError) {
        let lists = ChangeLists(diff)
        out.append("old: \(diff.old.name), \(diff.old.fileRowCount) rows; new: \(diff.new.name), \(diff.new.fileRowCount) rows; key \(keys.joined(separator: ","))\n")
        if let plan = diff.columns, !(plan.added.isEmpty && plan.removed.isEmpty && plan.renamed.isEmpty) {
            var parts: [String] = []
            if !plan.added.isEmpty { parts.append("\(plan.added.count) added (\(plan.added.joined(separator: ", ")))") }
            if !plan.removed.isEmpty { parts.append("\(plan.removed.count) removed (\(plan.removed.joined(separator: ", ")))") }
            if !plan.renamed.isEmpty { parts.append("\(plan.renamed.count) renamed (\(plan.renamed.map { "\($0.old) -> \($0.new)" }.joined(separator: ", ")))") }
            out.append("columns: \(parts.joined(separator: "; "))\n")
        }
        out.append("\(lists.deleted.count) deleted, \(lists.inserted.count) inserted, \(lists.updated.count) updated, \(lists.moved.count) moved\n")
        if let droppedOld = diff.changes.droppedOld, let droppedNew = diff.changes.droppedNew {
            out.append("repeated keys dropped: \(droppedOld.count) old, \(droppedNew.count) new\n")
        }
        func section(_ title: String, _ count: Int, _ line: (Int) throws(InputError) -> String) throws(InputError) {
            guard count > 0, limit > 0 else { return }
            out.append("\(title):\n")
            for index in 0..<min(count, limit) { out.append("  " + (try line(index)) + "\n") }
            if count > limit { out.append("  … and \(count - limit) more\n") }
        }
        func readable(_ json: [UInt8]?) -> String {
            guard let json else { return "(absent)" }
            return ReadableKey.escapingControls(String(decoding: json, as: UTF8.self))
        }
        try section("deleted", lists.deleted.count) { index in
            let row = lists.deleted[index]
            return "\(readableKey(old: true, row: row)) (old line \(diff.old.lines[row]))"
        }
        try section("inserted", lists.inserted.count) { index in
            let row = lists.inserted[index]
            return "\(readableKey(old: false, row: row)) (new line \(diff.new.lines[row]))"
        }
        try section("updated", lists.updated.count) { index throws(InputError) in
            let pair = lists.updated[index]
            let fields = fieldChanges(old: try values(old: true, row: pair.old), new: try values(old: false, row: pair.new))
            let described = fields.map { "\($0.name): \(readable($0.old)) -> \(readable($0.new))" }.joined(separator: "; ")
            return "\(readableKey(old: false, row: pair.new)) (line \(diff.old.lines[pair.old]) -> \(diff.new.lines[pair.new])): \(described)"
        }
        try section("moved", lists.moved.count) { index in
            let pair = lists.moved[index]
            return "\(readableKey(old: false, row: pair.new)) (line \(diff.old.lines[pair.old]) -> \(diff.new.lines[pair.new]))"
        }
    }

    /// `--format indexes`: the changeset's row indexes (SPEC's index form); in a partition,
    /// indexes are the file's rows, so that partitions' outputs combine.
    func renderIndexes(to out: inout OutputSink) {
        let changes = diff.changes
        guard diff.old.fileRowCount != diff.old.count || diff.new.fileRowCount != diff.new.count else {
            out.append(JSONChangesetRenderer().render(changes))
            return
        }
        let oldFileRow = { (index: Int) in Int(self.diff.old.fileRows[self.diff.oldRowOf[index]]) }
        let newFileRow = { (index: Int) in Int(self.diff.new.fileRows[self.diff.newRowOf[index]]) }
        let mapped = Changeset(
            oldCount: diff.old.fileRowCount, newCount: diff.new.fileRowCount,
            deletions: changes.deletions.map(oldFileRow), insertions: changes.insertions.map(newFileRow),
            updates: changes.updates.map { IndexPair(old: oldFileRow($0.old), new: newFileRow($0.new)) },
            moves: changes.moves.map { IndexPair(old: oldFileRow($0.old), new: newFileRow($0.new)) },
            droppedOld: changes.droppedOld.map { $0.map { Int(diff.old.fileRows[$0]) } },
            droppedNew: changes.droppedNew.map { $0.map { Int(diff.new.fileRows[$0]) } })
        out.append(JSONChangesetRenderer().render(mapped))
    }

    /// `--format patch`: an RFC 6902 JSON Patch turning the array of the old file's
    /// objects into the new file's. Deleted and moved rows are removed (highest index
    /// first), inserted and moved rows added at their new index (lowest first), and
    /// updated rows patched member by member in place.
    func renderPatch(to out: inout OutputSink) throws(InputError) {
        let lists = ChangeLists(diff)
        var first = true
        func begin() {
            out.append(first ? "[\n" : ",\n")
            first = false
        }
        let movedOld = Set(lists.moved.map(\.old)), movedNew = Set(lists.moved.map(\.new))
        let removals = (lists.deleted + Array(movedOld)).sorted(by: >)
        for row in removals {
            begin()
            out.append("{\"op\":\"remove\",\"path\":\"/\(diff.old.fileRows[row])\"}")
            try out.flushIfLarge()
        }
        let additions = (lists.inserted + Array(movedNew)).sorted()
        for row in additions {
            begin()
            out.append("{\"op\":\"add\",\"path\":\"/\(diff.new.fileRows[row])\",\"value\":")
            appendValues(try values(old: false, row: row), old: false, to: &out)
            out.append(byte: UInt8(ascii: "}"))
            try out.flushIfLarge()
        }
        let oldValues = try updatedOldValues(lists)
        for pair in lists.updated where !movedNew.contains(pair.new) {
            for change in fieldChanges(old: oldValues[pair.old]!, new: try values(old: false, row: pair.new)) {
                begin()
                let path = "/\(diff.new.fileRows[pair.new])/" + change.name.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
                let op = change.new == nil ? "remove" : change.old == nil ? "add" : "replace"
                out.append("{\"op\":\"\(op)\",\"path\":")
                out.appendJSONString(path)
                if let value = change.new {
                    out.append(",\"value\":")
                    out.append(value)
                }
                out.append(byte: UInt8(ascii: "}"))
            }
            try out.flushIfLarge()
        }
        out.append(first ? "[]\n" : "\n]\n")
    }
}
