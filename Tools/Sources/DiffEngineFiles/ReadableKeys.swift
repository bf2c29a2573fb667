import Foundation

/// Row keys for people, always on one line: what a message or the summary prints for a
/// row's identity bytes (never the internal encodings).
public enum ReadableKey {
    /// A CSV key: the key fields' texts joined by commas, each quoted as CSV would quote it
    /// and with line breaks and other control characters escaped (`\n`, `\u{1}`).
    /// - Parameter columns: how many key columns; several are stored length-prefixed.
    public static func csv(_ bytes: ArraySlice<UInt8>, columns: Int) -> String {
        keyFields(bytes, columns: columns).map(csvField).joined(separator: ",")
    }

    /// The values of a delimited row's identity bytes: the bytes themselves for one key
    /// column; for several, each stored as a 4-byte little-endian length and its bytes.
    public static func keyFields(_ bytes: ArraySlice<UInt8>, columns: Int) -> [ArraySlice<UInt8>] {
        guard columns > 1 else { return [bytes] }
        var fields: [ArraySlice<UInt8>] = []
        var index = bytes.startIndex
        while bytes.endIndex - index >= 4 {
            let length = (0..<4).reduce(0) { $0 | Int(bytes[index + $1]) << (8 * $1) }
            index += 4
            let end = min(index + length, bytes.endIndex)
            fields.append(bytes[index..<end])
            index = end
        }
        return fields
    }

    private static func csvField(_ bytes: ArraySlice<UInt8>) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        let needsQuotes = text.isEmpty || text.unicodeScalars.contains { $0 == "," || $0 == "\"" || $0.value < 0x20 || $0 == " " }
        guard needsQuotes else { return escapingControls(text) }
        return "\"" + escapingControls(text, doubling: "\"") + "\""
    }

    /// A JSON key: the key members' values as JSON text, joined by commas.
    public static func json(_ bytes: ArraySlice<UInt8>) -> String {
        var out: [UInt8] = []
        appendJSON(bytes, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `json(bytes)` to `out` as UTF-8, without a `String` per value: the keyed
    /// output writes one for every row it lists.
    public static func appendJSON(_ bytes: ArraySlice<UInt8>, to out: inout [UInt8]) {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let mark = out.count
            if index > bytes.startIndex { out.append(UInt8(ascii: ",")) }
            guard appendJSONValue(bytes, &index, to: &out) else {
                // The values read so far, then an ellipsis for the rest.
                out.removeSubrange(mark...)
                out.append(contentsOf: "…".utf8)
                return
            }
        }
    }

    /// Appends one canonical JSON value at `index` (see `JSONDocuments`) as JSON text;
    /// false, with `out` partly written, where the bytes end early or are not canonical.
    private static func appendJSONValue(_ bytes: ArraySlice<UInt8>, _ index: inout Int, to out: inout [UInt8]) -> Bool {
        guard index < bytes.endIndex else { return false }
        let kind = bytes[index]
        index += 1
        switch kind {
        case UInt8(ascii: "n"): out.append(contentsOf: "null".utf8)
        case UInt8(ascii: "t"): out.append(contentsOf: "true".utf8)
        case UInt8(ascii: "f"): out.append(contentsOf: "false".utf8)
        case UInt8(ascii: "s"):
            guard let text = string(bytes, &index) else { return false }
            appendJSONString(text, to: &out)
        case UInt8(ascii: "d"):
            guard let end = bytes[index...].firstIndex(of: UInt8(ascii: ";")) else { return false }
            appendNumber(bytes[index..<end], to: &out)
            index = end + 1
        case UInt8(ascii: "["):
            out.append(UInt8(ascii: "["))
            var first = true
            while index < bytes.endIndex && bytes[index] != UInt8(ascii: "]") {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                guard appendJSONValue(bytes, &index, to: &out) else { return false }
            }
            guard index < bytes.endIndex else { return false }
            index += 1
            out.append(UInt8(ascii: "]"))
        case UInt8(ascii: "{"):
            out.append(UInt8(ascii: "{"))
            var first = true
            while index < bytes.endIndex && bytes[index] == UInt8(ascii: "s") {
                index += 1
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                guard let key = string(bytes, &index) else { return false }
                appendJSONString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                guard appendJSONValue(bytes, &index, to: &out) else { return false }
            }
            guard index < bytes.endIndex, bytes[index] == UInt8(ascii: "}") else { return false }
            index += 1
            out.append(UInt8(ascii: "}"))
        default:
            return false
        }
        return true
    }

    /// A canonical string's bytes: a 4-byte little-endian length, then the UTF-8 bytes.
    private static func string(_ bytes: ArraySlice<UInt8>, _ index: inout Int) -> ArraySlice<UInt8>? {
        guard bytes.endIndex - index >= 4 else { return nil }
        let length = (0..<4).reduce(0) { $0 | Int(bytes[index + $1]) << (8 * $1) }
        index += 4
        guard bytes.endIndex - index >= length else { return nil }
        defer { index += length }
        return bytes[index..<index + length]
    }

    /// Canonical digits and exponent (`-15e-1`) as an ordinary JSON number (`-1.5`); other
    /// text as it is.
    private static func appendNumber(_ canonical: ArraySlice<UInt8>, to out: inout [UInt8]) {
        guard let e = canonical.firstIndex(of: UInt8(ascii: "e")) else { return out.append(contentsOf: canonical) }
        let mantissa = canonical[..<e], written = canonical[(e + 1)...]
        let negative = mantissa.first == UInt8(ascii: "-")
        let digits = negative ? mantissa.dropFirst() : mantissa
        guard !digits.isEmpty, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let exponent = Int(String(decoding: written, as: UTF8.self)), abs(exponent) <= 1 << 40 else {
            return out.append(contentsOf: canonical)
        }
        if negative { out.append(UInt8(ascii: "-")) }
        let zero = UInt8(ascii: "0")
        if exponent >= 0 && exponent <= 6 {
            out.append(contentsOf: digits)
            out.append(contentsOf: repeatElement(zero, count: exponent))
        } else if exponent < 0 && -exponent < digits.count {
            let point = digits.endIndex + exponent
            out.append(contentsOf: digits[..<point])
            out.append(UInt8(ascii: "."))
            out.append(contentsOf: digits[point...])
        } else if exponent < 0 && -exponent - digits.count <= 6 {
            out.append(contentsOf: "0.".utf8)
            out.append(contentsOf: repeatElement(zero, count: -exponent - digits.count))
            out.append(contentsOf: digits)
        } else {
            out.append(digits[digits.startIndex])
            if digits.count > 1 {
                out.append(UInt8(ascii: "."))
                out.append(contentsOf: digits.dropFirst())
            }
            out.append(UInt8(ascii: "e"))
            out.append(contentsOf: String(exponent + digits.count - 1).utf8)
        }
    }

    /// A JSON string of UTF-8 `text`, with control characters escaped as
    /// `escapingControls` escapes them. Byte by byte: every byte it escapes is ASCII, which
    /// UTF-8 never uses inside a longer sequence.
    /// A key's string: DEL escaped too, so that a key prints as visible text.
    private static func appendJSONString(_ text: ArraySlice<UInt8>, to out: inout [UInt8]) {
        if text.contains(where: { $0 >= 0x80 }) {
            // Invalid UTF-8 reads as U+FFFD, as `String(decoding:)` reads it.
            var repaired = String(decoding: text, as: UTF8.self)
            repaired.withUTF8 { JSONString.append(UnsafeRawBufferPointer($0), escapingDelete: true, to: &out) }
        } else {
            text.withUnsafeBytes { JSONString.append($0, escapingDelete: true, to: &out) }
        }
    }

    /// Line breaks, tabs and other control characters as escapes, so a key stays on one line;
    /// `doubling` is written twice (CSV's quote) and each of `backslashing` after a backslash
    /// (JSON's). Scalar by scalar: a backslash or quote followed by a combining mark is one
    /// `Character`, which string-level replacement would miss.
    public static func escapingControls(_ text: String, doubling: Unicode.Scalar? = nil,
                                        backslashing: Set<Unicode.Scalar> = []) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            if scalar == doubling {
                out.unicodeScalars.append(scalar)
                out.unicodeScalars.append(scalar)
                continue
            }
            if backslashing.contains(scalar) {
                out += "\\"
                out.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7f:
                out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

/// JSON strings from UTF-8 bytes, for the readable keys and for `diffengine`'s output.
public enum JSONString {
    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Appends `value` as a JSON string: quotes, backslashes and control characters escaped
    /// (`\n`, `\r`, `\t`, else `\u00XX`), and DEL too when `escapingDelete`. Runs of bytes
    /// that need no escape are copied at once. `value` must be valid UTF-8; every byte
    /// escaped is ASCII, which UTF-8 never uses inside a longer sequence.
    public static func append(_ value: UnsafeRawBufferPointer, escapingDelete: Bool = false, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var runStart = 0
        for index in value.indices {
            let byte = value[index]
            if byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") && !(escapingDelete && byte == 0x7F) { continue }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: value[runStart..<index]))
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), byte])
            case 0x0A: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            default:
                out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                        hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 15)]])
            }
            runStart = index + 1
        }
        out.append(contentsOf: UnsafeRawBufferPointer(rebasing: value[runStart...]))
        out.append(UInt8(ascii: "\""))
    }
}
