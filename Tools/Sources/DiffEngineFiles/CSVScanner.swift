/// A field of a CSV record: its bytes in the scanned buffer (inside the quotes when quoted).
public struct CSVFieldSpan: Sendable {
    /// The first byte of the field's text.
    public var start: Int
    /// One past its last byte.
    public var end: Int
    /// Whether the field was quoted.
    public var quoted: Bool
    /// Whether it holds doubled quotes, so its value differs from its bytes.
    public var escapedQuotes: Bool

    /// Appends the field's value (quotes undoubled) to `out`.
    @inlinable
    public func appendValue(from buffer: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        guard escapedQuotes else {
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[start..<end]))
            return
        }
        var index = start
        while index < end {
            let byte = buffer[index]
            out.append(byte)
            index += byte == UInt8(ascii: "\"") ? 2 : 1
        }
    }

    /// The field's value.
    public func value(in buffer: UnsafeRawBufferPointer) -> [UInt8] {
        var out: [UInt8] = []
        appendValue(from: buffer, to: &out)
        return out
    }
}

/// What scanning at a position found.
public enum CSVScanResult: Equatable, Sendable {
    /// A record; the next one starts at `next`, `lines` line breaks later.
    case record(next: Int, lines: Int)
    /// An empty line, skipped; the next record starts at `next`.
    case blank(next: Int)
    /// The buffer ends inside the record: give it more bytes.
    case incomplete
    /// Nothing left.
    case end
}

/// Bad CSV: what is wrong and how many line breaks into the record it was found.
public struct CSVSyntaxError: Error, Sendable {
    /// What is wrong, in a few words.
    public var message: String
    /// Line breaks between the record's first line and the one at fault.
    public var lineOffset: Int
}

/// Scans RFC 4180 records (any one-byte delimiter) from a buffer that may end mid-record:
/// fields are separated by the delimiter and records by LF or CRLF; a quoted field may hold
/// delimiters, doubled quotes and line breaks. Empty lines are skipped.
public struct CSVScanner: Sendable {
    /// The field separator: a comma, a tab, a semicolon…
    public let delimiter: UInt8

    private let delimiterWord: UInt64

    /// A scanner for `delimiter`.
    public init(delimiter: UInt8) {
        self.delimiter = delimiter
        delimiterWord = UInt64(delimiter) &* CSVScanner.ones
    }

    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let newlineWord = 0x0A &* ones, returnWord = 0x0D &* ones, quoteWord = 0x22 &* ones

    /// The high bit of each zero byte of `word` set (exact for the lowest zero byte, which
    /// is all the scanner uses; little-endian loads put the first byte lowest).
    @inline(__always)
    private static func zeroBytes(_ word: UInt64) -> UInt64 {
        (word &- ones) & ~word & 0x8080_8080_8080_8080
    }

    /// Scans one record starting at `position` of `buffer`, its fields into `fields`.
    /// - Parameter atEnd: whether `buffer` ends where the file ends; if not, a record that
    ///   runs to the end of the buffer is `.incomplete`.
    public func scan(_ buffer: UnsafeRawBufferPointer, from position: Int, atEnd: Bool,
                     fields: inout [CSVFieldSpan]) throws(CSVSyntaxError) -> CSVScanResult {
        let end = buffer.count
        let quote = UInt8(ascii: "\""), newline: UInt8 = 0x0A, carriageReturn: UInt8 = 0x0D
        fields.removeAll(keepingCapacity: true)
        var index = position
        guard index < end else { return atEnd ? .end : .incomplete }
        if buffer[index] == newline { return .blank(next: index + 1) }
        if buffer[index] == carriageReturn {
            guard index + 1 < end else { return atEnd ? .blank(next: end) : .incomplete }
            guard buffer[index + 1] == newline else {
                throw CSVSyntaxError(message: "a carriage return outside quotes that does not end a line", lineOffset: 0)
            }
            return .blank(next: index + 2)
        }
        var lines = 0
        while true {
            if index < end && buffer[index] == quote {
                let startLines = lines
                index += 1
                let start = index
                var escaped = false
                while true {
                    guard index < end else {
                        if atEnd { throw CSVSyntaxError(message: "unterminated quoted field", lineOffset: startLines) }
                        return .incomplete
                    }
                    let byte = buffer[index]
                    if byte == quote {
                        guard index + 1 < end else {
                            if atEnd { break }
                            return .incomplete
                        }
                        if buffer[index + 1] == quote {
                            escaped = true
                            index += 2
                            continue
                        }
                        break
                    }
                    if byte == newline { lines += 1 }
                    index += 1
                }
                fields.append(CSVFieldSpan(start: start, end: index, quoted: true, escapedQuotes: escaped))
                index += 1
                guard index < end else {
                    if atEnd { return .record(next: index, lines: lines) }
                    return .incomplete
                }
                let next = buffer[index]
                guard next == delimiter || next == newline || next == carriageReturn else {
                    throw CSVSyntaxError(message: "unexpected character after a closing quote", lineOffset: lines)
                }
            } else {
                let start = index
                // Eight bytes at a time to the next delimiter, line break or quote.
                let base = buffer.baseAddress!
                while index + 8 <= end {
                    let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                    let found = CSVScanner.zeroBytes(word ^ delimiterWord) | CSVScanner.zeroBytes(word ^ CSVScanner.newlineWord)
                        | CSVScanner.zeroBytes(word ^ CSVScanner.returnWord) | CSVScanner.zeroBytes(word ^ CSVScanner.quoteWord)
                    if found != 0 {
                        index += found.trailingZeroBitCount >> 3
                        break
                    }
                    index += 8
                }
                while index < end {
                    let byte = buffer[index]
                    if byte == delimiter || byte == newline || byte == carriageReturn { break }
                    if byte == quote {
                        throw CSVSyntaxError(message: "a quote inside an unquoted field", lineOffset: lines)
                    }
                    index += 1
                }
                guard index < end else {
                    guard atEnd else { return .incomplete }
                    fields.append(CSVFieldSpan(start: start, end: index, quoted: false, escapedQuotes: false))
                    return .record(next: index, lines: lines)
                }
                fields.append(CSVFieldSpan(start: start, end: index, quoted: false, escapedQuotes: false))
            }
            let separator = buffer[index]
            if separator == delimiter {
                index += 1
                continue
            }
            if separator == carriageReturn {
                guard index + 1 < end else {
                    if atEnd {
                        throw CSVSyntaxError(message: "a carriage return outside quotes that does not end a line", lineOffset: lines)
                    }
                    return .incomplete
                }
                guard buffer[index + 1] == newline else {
                    throw CSVSyntaxError(message: "a carriage return outside quotes that does not end a line", lineOffset: lines)
                }
                return .record(next: index + 2, lines: lines + 1)
            }
            return .record(next: index + 1, lines: lines + 1)
        }
    }

    /// Whether `value` must be quoted to be written as one field.
    @inlinable
    public func needsQuotes(_ value: UnsafeRawBufferPointer) -> Bool {
        value.contains { $0 == delimiter || $0 == UInt8(ascii: "\"") || $0 == 0x0A || $0 == 0x0D }
    }

    /// Appends `value` as one field, quoted only when it must be.
    @inlinable
    public func appendField(_ value: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        guard needsQuotes(value) else {
            out.append(contentsOf: value)
            return
        }
        out.append(UInt8(ascii: "\""))
        for byte in value {
            if byte == UInt8(ascii: "\"") { out.append(byte) }
            out.append(byte)
        }
        out.append(UInt8(ascii: "\""))
    }
}
