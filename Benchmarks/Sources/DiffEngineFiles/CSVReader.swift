import DiffEngine
import Foundation

/// Reads RFC 4180 CSV: the first record is the header; fields are separated by commas
/// and records by LF or CRLF; a quoted field may hold commas, doubled quotes and line
/// breaks. Every record must have the header's number of fields.
///
/// Rows become spans of the shared buffer. Identity: the key fields' values (one key:
/// the value itself; several: each as a 4-byte little-endian length and the bytes).
/// Content: the record with minimal quoting, which for a record without quotes is its
/// own bytes, so most rows need no copy; records that use quotes are re-encoded into the
/// buffer's tail.
public struct CSVReader {
    /// The header names of the key columns, in order.
    public let keys: [String]

    /// Creates a reader that keys rows by the columns named `keys`.
    public init(keys: [String]) {
        self.keys = keys
    }

    /// Parses the file at `range` of `bytes`, appending re-encodings to `bytes`.
    public func read(_ bytes: inout [UInt8], _ range: Range<Int>, file: String) throws(InputError) -> FileRows {
        var result = FileRows(path: file)
        var keyColumns: [Int] = []
        var extra: [UInt8] = [] // re-encodings, appended to `bytes` at the end
        let extraBase = bytes.count
        var failure: InputError?
        bytes.withUnsafeBytes { buffer in
            do throws(InputError) {
                var parser = CSVParser(buffer: buffer, position: range.lowerBound, end: range.upperBound, file: file)
                var fields: [CSVField] = [] // reused for every record
                guard try parser.record(into: &fields) else {
                    throw InputError(file: file, line: 1, message: "empty file: expected a header line")
                }
                let header = fields
                let names = header.map { parser.value(of: $0) }
                for key in keys {
                    guard let column = names.firstIndex(of: Array(key.utf8)) else {
                        throw InputError(file: file, line: 1, message: "no column '\(key)' in the header")
                    }
                    keyColumns.append(column)
                }
                while true {
                    let line = parser.line
                    guard try parser.record(into: &fields) else { break }
                    guard fields.count == header.count else {
                        throw InputError(file: file, line: line, message: "expected \(header.count) fields, found \(fields.count)")
                    }
                    result.rows.append(encode(fields, parser: parser, keyColumns: keyColumns, extra: &extra, extraBase: extraBase))
                    result.lines.append(Int32(truncatingIfNeeded: line))
                }
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        bytes.append(contentsOf: extra)
        return result
    }

    private func encode(_ fields: [CSVField], parser: CSVParser, keyColumns: [Int],
                        extra: inout [UInt8], extraBase: Int) -> ByteRow {
        let identity: Range<Int>
        if keyColumns.count == 1 && !fields[keyColumns[0]].quoted {
            identity = fields[keyColumns[0]].bytes
        } else {
            let start = extra.count
            for column in keyColumns {
                let value = parser.value(of: fields[column])
                if keyColumns.count > 1 {
                    let length = UInt32(value.count)
                    for shift in stride(from: 0, to: 32, by: 8) { extra.append(UInt8(truncatingIfNeeded: length >> shift)) }
                }
                extra.append(contentsOf: value)
            }
            identity = extraBase + start..<extraBase + extra.count
        }
        let content: Range<Int>
        if !fields.contains(where: \.quoted) {
            content = fields.first!.bytes.lowerBound..<fields.last!.bytes.upperBound
        } else {
            let start = extra.count
            for (index, field) in fields.enumerated() {
                if index > 0 { extra.append(UInt8(ascii: ",")) }
                let value = parser.value(of: field)
                let needsQuotes = value.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0A || $0 == 0x0D }
                if needsQuotes {
                    extra.append(UInt8(ascii: "\""))
                    for byte in value {
                        if byte == UInt8(ascii: "\"") { extra.append(byte) }
                        extra.append(byte)
                    }
                    extra.append(UInt8(ascii: "\""))
                } else {
                    extra.append(contentsOf: value)
                }
            }
            content = extraBase + start..<extraBase + extra.count
        }
        return ByteRow(identity: identity, content: content)
    }
}

/// A field: its bytes (inside the quotes when quoted) and whether it was quoted.
struct CSVField {
    var bytes: Range<Int>
    var quoted: Bool
    var hasEscapedQuotes: Bool
}

/// The record scanner, over the raw buffer.
struct CSVParser {
    let buffer: UnsafeRawBufferPointer
    var position: Int
    let end: Int
    let file: String
    /// The 1-based line where the next record starts.
    var line = 1
    /// Where the last scan for trailing blank lines found a byte that is not a line break:
    /// records that start before it are not trailing, so no line rescans the run.
    var contentAfterBlanks = 0

    /// The unescaped value of a field.
    func value(of field: CSVField) -> [UInt8] {
        let raw = buffer[field.bytes]
        guard field.hasEscapedQuotes else { return Array(raw) }
        var value: [UInt8] = []
        value.reserveCapacity(raw.count)
        var skipNext = false
        for byte in raw {
            if skipNext {
                skipNext = false
                continue
            }
            value.append(byte)
            if byte == UInt8(ascii: "\"") { skipNext = true }
        }
        return value
    }

    /// Reads the next record's fields into `fields`; false at the end of the file.
    mutating func record(into fields: inout [CSVField]) throws(InputError) -> Bool {
        fields.removeAll(keepingCapacity: true)
        guard position < end else { return false }
        // Blank lines at the very end (a trailing newline or two) end the file. Each run of
        // line breaks is scanned once, however many lines it holds.
        if (buffer[position] == 0x0A || buffer[position] == 0x0D) && position >= contentAfterBlanks {
            var scan = position
            while scan < end && (buffer[scan] == 0x0A || buffer[scan] == 0x0D) { scan += 1 }
            if scan == end {
                position = end
                return false
            }
            contentAfterBlanks = scan
        }
        while true {
            let field = try self.field()
            fields.append(field)
            if position >= end { return true }
            let separator = buffer[position]
            position += 1
            if separator == UInt8(ascii: ",") { continue }
            // A line break: LF or CRLF.
            if separator == 0x0D {
                guard position < end, buffer[position] == 0x0A else {
                    throw InputError(file: file, line: line, message: "a carriage return outside quotes that does not end a line")
                }
                position += 1
            }
            line += 1
            return true
        }
    }

    private mutating func field() throws(InputError) -> CSVField {
        if position < end && buffer[position] == UInt8(ascii: "\"") {
            let startLine = line
            position += 1
            let start = position
            var escaped = false
            while true {
                guard position < end else {
                    throw InputError(file: file, line: startLine, message: "unterminated quoted field")
                }
                let byte = buffer[position]
                if byte == UInt8(ascii: "\"") {
                    if position + 1 < end && buffer[position + 1] == UInt8(ascii: "\"") {
                        escaped = true
                        position += 2
                        continue
                    }
                    let field = CSVField(bytes: start..<position, quoted: true, hasEscapedQuotes: escaped)
                    position += 1
                    if position < end {
                        let next = buffer[position]
                        guard next == UInt8(ascii: ",") || next == 0x0A || next == 0x0D else {
                            throw InputError(file: file, line: line, message: "unexpected character after a closing quote")
                        }
                    }
                    return field
                }
                if byte == 0x0A { line += 1 }
                position += 1
            }
        }
        let start = position
        while position < end {
            let byte = buffer[position]
            if byte == UInt8(ascii: ",") || byte == 0x0A || byte == 0x0D { break }
            if byte == UInt8(ascii: "\"") {
                throw InputError(file: file, line: line, message: "a quote inside an unquoted field")
            }
            position += 1
        }
        return CSVField(bytes: start..<position, quoted: false, hasEscapedQuotes: false)
    }
}
