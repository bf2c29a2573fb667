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
        var index = bytes.startIndex
        var values: [String] = []
        while index < bytes.endIndex {
            guard let value = jsonValue(bytes, &index) else { return values.joined(separator: ",") + "…" }
            values.append(value)
        }
        return values.joined(separator: ",")
    }

    /// Decodes one canonical JSON value at `index` (see `JSONDocuments`) as JSON text.
    private static func jsonValue(_ bytes: ArraySlice<UInt8>, _ index: inout Int) -> String? {
        guard index < bytes.endIndex else { return nil }
        let kind = bytes[index]
        index += 1
        switch kind {
        case UInt8(ascii: "n"): return "null"
        case UInt8(ascii: "t"): return "true"
        case UInt8(ascii: "f"): return "false"
        case UInt8(ascii: "s"):
            guard let text = string(bytes, &index) else { return nil }
            return jsonString(text)
        case UInt8(ascii: "d"):
            guard let end = bytes[index...].firstIndex(of: UInt8(ascii: ";")) else { return nil }
            let text = String(decoding: bytes[index..<end], as: UTF8.self)
            index = end + 1
            return number(text)
        case UInt8(ascii: "["):
            var items: [String] = []
            while index < bytes.endIndex && bytes[index] != UInt8(ascii: "]") {
                guard let item = jsonValue(bytes, &index) else { return nil }
                items.append(item)
            }
            guard index < bytes.endIndex else { return nil }
            index += 1
            return "[" + items.joined(separator: ",") + "]"
        case UInt8(ascii: "{"):
            var members: [String] = []
            while index < bytes.endIndex && bytes[index] == UInt8(ascii: "s") {
                index += 1
                guard let key = string(bytes, &index), let value = jsonValue(bytes, &index) else { return nil }
                members.append(jsonString(key) + ":" + value)
            }
            guard index < bytes.endIndex, bytes[index] == UInt8(ascii: "}") else { return nil }
            index += 1
            return "{" + members.joined(separator: ",") + "}"
        default:
            return nil
        }
    }

    private static func string(_ bytes: ArraySlice<UInt8>, _ index: inout Int) -> String? {
        guard bytes.endIndex - index >= 4 else { return nil }
        let length = (0..<4).reduce(0) { $0 | Int(bytes[index + $1]) << (8 * $1) }
        index += 4
        guard bytes.endIndex - index >= length else { return nil }
        defer { index += length }
        return String(decoding: bytes[index..<index + length], as: UTF8.self)
    }

    /// Canonical digits and exponent (`-15e-1`) as an ordinary JSON number (`-1.5`).
    private static func number(_ canonical: String) -> String {
        let parts = canonical.split(separator: "e", maxSplits: 1)
        guard parts.count == 2, let exponent = Int(parts[1]) else { return canonical }
        let negative = parts[0].hasPrefix("-")
        let digits = String(parts[0].drop { $0 == "-" })
        let sign = negative ? "-" : ""
        if exponent == 0 { return sign + digits }
        if exponent > 0 && exponent <= 6 { return sign + digits + String(repeating: "0", count: exponent) }
        if exponent < 0 && -exponent < digits.count {
            let point = digits.index(digits.endIndex, offsetBy: exponent)
            return sign + digits[..<point] + "." + digits[point...]
        }
        if exponent < 0 && -exponent - digits.count <= 6 {
            return sign + "0." + String(repeating: "0", count: -exponent - digits.count) + digits
        }
        let mantissa = digits.count > 1 ? String(digits.prefix(1)) + "." + digits.dropFirst() : digits
        return sign + mantissa + "e" + String(exponent + digits.count - 1)
    }

    private static func jsonString(_ text: String) -> String {
        "\"" + escapingControls(text, backslashing: ["\\", "\""]) + "\""
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
