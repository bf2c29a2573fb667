/// A JSON text that does not parse: where and why.
public struct JSONSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The byte offset of the problem in the text.
    public var offset: Int
    /// What is wrong, in a few words.
    public var message: String

    /// Creates an error at byte `offset` of the text.
    public init(offset: Int, message: String) {
        self.offset = offset
        self.message = message
    }

    /// The message and the 1-based byte position.
    public var description: String { "\(message) at byte \(offset + 1)" }
}

/// Writes the canonical encoding of JSON values: two values have the same encoding
/// exactly when they are equal by value (<doc:StableHashes>):
/// - object members in order of their key's UTF-8 bytes (key order in the text does not
///   matter; of repeated keys the last wins, as in most parsers);
/// - numbers by value: `1`, `1.0`, `10e-1` and `-0` vs `0` are equal; exact for any number
///   of digits (no rounding through `Double`);
/// - `true`, `false` and `null` distinct from each other and from numbers;
/// - strings as their unescaped UTF-8 bytes, with no Unicode normalization.
///
/// The encoding is prefix-free (each value announces its kind and, for strings, its
/// length), so a tuple of key values is the concatenation of their encodings:
/// `n`, `t`, `f`; `d` [`-`] significant digits `e` exponent `;`; `s` 4-byte little-endian
/// length and bytes; `[` values `]`; `{` (key string, value)… `}`.
///
/// Everything is written straight into one output array; objects are put in key order by
/// moving their members' regions through one reused scratch buffer.
@usableFromInline
internal struct _CanonicalJSONWriter {
    /// A member written into the output: the whole region, and where its key bytes are.
    struct Member {
        var start: Int
        var keyStart: Int
        var keyEnd: Int
        var end: Int
    }

    private let text: UnsafeRawBufferPointer
    private var position = 0
    private var depth = 0
    private static let maximumDepth = 512

    /// Reused between documents.
    struct Scratch {
        var members: [Member] = []
        var bytes: [UInt8] = []
        var order: [Int] = []
        var sorted: [Member] = []
        /// The key order of the last object sorted: its keys in text order (each a 4-byte
        /// length and its bytes) and their order by key, relative to its first member. Rows
        /// of a JSON Lines file mostly repeat their members in one order, so the next object
        /// mostly takes this order after a comparison of its keys.
        var lastKeys: [UInt8] = []
        var lastOrder: [Int] = []
    }

    init(_ text: UnsafeRawBufferPointer) {
        self.text = text
    }

    /// Parses one value that must fill the text (whitespace aside) and appends its
    /// canonical encoding to `out`.
    static func encodeDocument(_ text: UnsafeRawBufferPointer, into out: inout [UInt8]) throws(JSONSyntaxError) {
        var scratch = Scratch()
        try encodeDocument(text, into: &out, &scratch)
    }

    static func encodeDocument(_ text: UnsafeRawBufferPointer, into out: inout [UInt8], _ scratch: inout Scratch) throws(JSONSyntaxError) {
        var writer = _CanonicalJSONWriter(text)
        writer.skipWhitespace()
        try writer.value(into: &out, &scratch)
        writer.skipWhitespace()
        if writer.position < text.count { throw writer.error("unexpected text after the value") }
    }

    /// Parses a JSON object that must fill the text, appends its encoding to `out`, and
    /// leaves its top-level members (in key order, regions of `out`) in `scratch.members`.
    static func encodeObject(_ text: UnsafeRawBufferPointer, into out: inout [UInt8],
                             _ scratch: inout Scratch) throws(JSONSyntaxError) -> Bool {
        var writer = _CanonicalJSONWriter(text)
        writer.skipWhitespace()
        guard writer.peek() == UInt8(ascii: "{") else { return false }
        scratch.members.removeAll(keepingCapacity: true)
        try writer.object(into: &out, &scratch, keepingMembers: true)
        writer.skipWhitespace()
        if writer.position < text.count { throw writer.error("unexpected text after the object") }
        return true
    }

    private func error(_ message: String) -> JSONSyntaxError {
        JSONSyntaxError(offset: position, message: message)
    }

    @inline(__always)
    private func peek() -> UInt8? {
        position < text.count ? text[position] : nil
    }

    private mutating func skipWhitespace() {
        while position < text.count {
            switch text[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    private mutating func literal(_ word: StaticString, _ code: UInt8, into out: inout [UInt8]) throws(JSONSyntaxError) {
        let bytes = UnsafeRawBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        guard text.count - position >= bytes.count,
              bytes.indices.allSatisfy({ text[position + $0] == bytes[$0] }) else {
            throw error("invalid literal")
        }
        position += bytes.count
        out.append(code)
    }

    private mutating func value(into out: inout [UInt8], _ scratch: inout Scratch) throws(JSONSyntaxError) {
        guard let byte = peek() else { throw error("expected a value, found the end") }
        switch byte {
        case UInt8(ascii: "{"): try object(into: &out, &scratch, keepingMembers: false)
        case UInt8(ascii: "["): try array(into: &out, &scratch)
        case UInt8(ascii: "\""): try string(into: &out)
        case UInt8(ascii: "t"): try literal("true", UInt8(ascii: "t"), into: &out)
        case UInt8(ascii: "f"): try literal("false", UInt8(ascii: "f"), into: &out)
        case UInt8(ascii: "n"): try literal("null", UInt8(ascii: "n"), into: &out)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number(into: &out)
        default: throw error("unexpected character")
        }
    }

    private mutating func enter() throws(JSONSyntaxError) {
        depth += 1
        if depth > Self.maximumDepth { throw error("nested deeper than \(Self.maximumDepth) levels") }
    }

    private mutating func array(into out: inout [UInt8], _ scratch: inout Scratch) throws(JSONSyntaxError) {
        try enter()
        defer { depth -= 1 }
        position += 1 // [
        out.append(UInt8(ascii: "["))
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            position += 1
            out.append(UInt8(ascii: "]"))
            return
        }
        while true {
            skipWhitespace()
            try value(into: &out, &scratch)
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"):
                position += 1
                out.append(UInt8(ascii: "]"))
                return
            default: throw error("expected ',' or ']' in an array")
            }
        }
    }

    /// Parses an object and appends its encoding with members in key order. With
    /// `keepingMembers`, its members stay in `scratch.members` (for the top-level object).
    private mutating func object(into out: inout [UInt8], _ scratch: inout Scratch, keepingMembers: Bool) throws(JSONSyntaxError) {
        try enter()
        defer { depth -= 1 }
        position += 1 // {
        out.append(UInt8(ascii: "{"))
        let firstMember = scratch.members.count // members of enclosing objects stay below
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            position += 1
        } else {
            while true {
                skipWhitespace()
                guard peek() == UInt8(ascii: "\"") else { throw error("expected a member name in quotes") }
                let start = out.count
                try string(into: &out)
                let keyEnd = out.count
                skipWhitespace()
                guard peek() == UInt8(ascii: ":") else { throw error("expected ':' after a member name") }
                position += 1
                skipWhitespace()
                try value(into: &out, &scratch)
                scratch.members.append(Member(start: start, keyStart: start + 5, keyEnd: keyEnd, end: out.count))
                skipWhitespace()
                guard let separator = peek(), separator == UInt8(ascii: ",") || separator == UInt8(ascii: "}") else {
                    throw error("expected ',' or '}' in an object")
                }
                position += 1
                if separator == UInt8(ascii: "}") { break }
            }
        }
        sortMembers(from: firstMember, in: &out, &scratch)
        out.append(UInt8(ascii: "}"))
        if !keepingMembers { scratch.members.removeSubrange(firstMember...) }
    }

    /// The first eight bytes of `bytes` (zeros past its end) as a number that orders as
    /// the bytes do.
    @inline(__always)
    private static func leadingWord(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        guard bytes.count < 8 else { return UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)) }
        var word: UInt64 = 0
        for byte in bytes { word = word << 8 | UInt64(byte) }
        return word << (8 * UInt64(8 - bytes.count))
    }

    /// Whether the key bytes `a` order before `b` (byte by byte, a prefix first): eight
    /// bytes at a time as one number; a member name is mostly told apart by its first eight.
    @inline(__always)
    private static func precedes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while true {
            let left = leadingWord(UnsafeRawBufferPointer(rebasing: a[offset...]))
            let right = leadingWord(UnsafeRawBufferPointer(rebasing: b[offset...]))
            if left != right { return left < right }
            offset += 8
            if offset >= a.count || offset >= b.count { return a.count < b.count }
        }
    }

    /// Whether `a` and `b` hold the same bytes, compared eight at a time (the last eight
    /// overlapping the ones before them).
    @inline(__always)
    private static func sameBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        let count = a.count
        guard count == b.count else { return false }
        guard count >= 8 else { return leadingWord(a) == leadingWord(b) }
        var offset = 0
        while offset + 8 < count {
            if a.loadUnaligned(fromByteOffset: offset, as: UInt64.self) != b.loadUnaligned(fromByteOffset: offset, as: UInt64.self) {
                return false
            }
            offset += 8
        }
        return a.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self) == b.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
    }

    /// Puts the members from `firstMember` on in key order (of equal keys only the last
    /// stays), moving their regions of `out` when they were out of order.
    private func sortMembers(from firstMember: Int, in out: inout [UInt8], _ scratch: inout Scratch) {
        let count = scratch.members.count - firstMember
        guard count > 1 else { return }
        // Taken out of the scratch while it sorts, so that no copy shares its storage.
        var members: [Member] = []
        swap(&members, &scratch.members)
        defer { swap(&members, &scratch.members) }
        let ordered = out.withUnsafeBytes { bytes in
            func key(_ member: Member) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[member.keyStart..<member.keyEnd]) }
            for index in firstMember + 1..<members.count where !Self.precedes(key(members[index - 1]), key(members[index])) {
                return false
            }
            return true
        }
        if ordered { return }
        scratch.order.removeAll(keepingCapacity: true)
        let known = out.withUnsafeBytes { bytes in
            // The last object's order, when this one has the same keys in the same order.
            guard scratch.lastOrder.count == count else { return false }
            return scratch.lastKeys.withUnsafeBytes { last in
                var at = 0
                for member in members[firstMember...] {
                    let key = UnsafeRawBufferPointer(rebasing: bytes[member.keyStart - 4..<member.keyEnd])
                    guard at + key.count <= last.count,
                          Self.sameBytes(key, UnsafeRawBufferPointer(rebasing: last[at..<at + key.count])) else { return false }
                    at += key.count
                }
                return at == last.count
            }
        }
        if known {
            for relative in scratch.lastOrder { scratch.order.append(firstMember + relative) }
        } else {
            scratch.order.append(contentsOf: firstMember..<members.count)
            out.withUnsafeBytes { bytes in
                func key(_ index: Int) -> UnsafeRawBufferPointer {
                    UnsafeRawBufferPointer(rebasing: bytes[members[index].keyStart..<members[index].keyEnd])
                }
                // Member indexes sorted by key, ties by position, so that of repeated keys the
                // later member comes last: O(k log k) comparisons whatever the order (an object
                // with tens of thousands of members in reverse order is cheap, not quadratic).
                scratch.order.sort { lhs, rhs in
                    let left = key(lhs), right = key(rhs)
                    if Self.precedes(left, right) { return true }
                    return lhs < rhs && !Self.precedes(right, left)
                }
                // Kept for the next object (the keys with their length prefixes, as written).
                scratch.lastKeys.removeAll(keepingCapacity: true)
                for member in members[firstMember...] {
                    scratch.lastKeys.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[member.keyStart - 4..<member.keyEnd]))
                }
                scratch.lastOrder.removeAll(keepingCapacity: true)
                for index in scratch.order { scratch.lastOrder.append(index - firstMember) }
            }
        }
        // The members' region, copied aside, comes back in key order in place.
        let regionStart = members[firstMember].start
        scratch.bytes.removeAll(keepingCapacity: true)
        scratch.bytes.append(contentsOf: out[regionStart...])
        scratch.sorted.removeAll(keepingCapacity: true)
        let regionEnd = scratch.bytes.withUnsafeBytes { region in
            out.withUnsafeMutableBytes { bytes in
                func key(_ member: Member) -> UnsafeRawBufferPointer {
                    UnsafeRawBufferPointer(rebasing: region[member.keyStart - regionStart..<member.keyEnd - regionStart])
                }
                var at = regionStart
                for (rank, index) in scratch.order.enumerated() {
                    let member = members[index]
                    // A repeated key: the last one wins.
                    if rank + 1 < scratch.order.count && key(members[scratch.order[rank + 1]]).elementsEqual(key(member)) { continue }
                    let length = member.end - member.start
                    (bytes.baseAddress! + at).copyMemory(from: region.baseAddress! + (member.start - regionStart), byteCount: length)
                    scratch.sorted.append(Member(start: at, keyStart: at + (member.keyStart - member.start),
                                                 keyEnd: at + (member.keyEnd - member.start), end: at + length))
                    at += length
                }
                return at
            }
        }
        out.removeLast(out.count - regionEnd) // the repeated keys' bytes
        members.replaceSubrange(firstMember..., with: scratch.sorted)
    }

    /// Appends `count` bytes at `bytes` to `out` as one typed copy (`append(contentsOf:)`
    /// of a raw buffer took the generic sequence path: 7% of a JSON Lines file's reading).
    @inline(__always)
    private static func append(_ bytes: UnsafeRawPointer, count: Int, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: bytes.assumingMemoryBound(to: UInt8.self), count: count))
    }

    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080
    private static let quoteWord = 0x22 &* ones, backslashWord = 0x5C &* ones, spaceWord = 0x20 &* ones

    /// The high bit of each zero byte of `word` set (exact for the lowest zero byte, the only
    /// one the scan uses; little-endian loads put the first byte lowest). With `spaceWord`
    /// in place of `ones`, the same for the bytes below a space (control characters).
    @inline(__always)
    private static func zeroBytes(_ word: UInt64) -> UInt64 {
        (word &- ones) & ~word & highBits
    }

    private mutating func hexDigit() throws(JSONSyntaxError) -> UInt32 {
        guard let byte = peek() else { throw error("unfinished \\u escape") }
        position += 1
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(byte - UInt8(ascii: "A") + 10)
        default: throw error("invalid hex digit in a \\u escape")
        }
    }

    private mutating func unicodeEscape() throws(JSONSyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 { value = value << 4 | (try hexDigit()) }
        return value
    }

    /// Parses a string and appends `s`, its length and its unescaped UTF-8 bytes (the
    /// text was validated as UTF-8 before, so raw bytes are copied as they are).
    private mutating func string(into out: inout [UInt8]) throws(JSONSyntaxError) {
        position += 1 // "
        // `s` and four bytes for the length, written at the end.
        withUnsafeBytes(of: UInt64(UInt8(ascii: "s")).littleEndian) { Self.append($0.baseAddress!, count: 5, to: &out) }
        let lengthAt = out.count - 4
        while true {
            // Copy a run of plain bytes at once, found eight bytes at a time.
            let runStart = position
            while position + 8 <= text.count {
                let word = UInt64(littleEndian: text.loadUnaligned(fromByteOffset: position, as: UInt64.self))
                let special = Self.zeroBytes(word ^ Self.quoteWord) | Self.zeroBytes(word ^ Self.backslashWord)
                    | ((word &- Self.spaceWord) & ~word & Self.highBits)
                if special != 0 {
                    position += special.trailingZeroBitCount >> 3
                    break
                }
                position += 8
            }
            while position < text.count {
                let byte = text[position]
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
                position += 1
            }
            if position > runStart { Self.append(text.baseAddress! + runStart, count: position - runStart, to: &out) }
            guard let byte = peek() else { throw error("unterminated string") }
            position += 1
            if byte == UInt8(ascii: "\"") { break }
            if byte < 0x20 { throw error("a control character in a string") }
            guard let escaped = peek() else { throw error("unterminated string") }
            position += 1
            switch escaped {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escaped)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try unicodeEscape()
                if (0xD800..<0xDC00).contains(scalar) {
                    guard peek() == UInt8(ascii: "\\"), position + 1 < text.count, text[position + 1] == UInt8(ascii: "u") else {
                        throw error("a high surrogate escape without its low surrogate")
                    }
                    position += 2
                    let low = try unicodeEscape()
                    guard (0xDC00..<0xE000).contains(low) else { throw error("a high surrogate escape without its low surrogate") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00..<0xE000).contains(scalar) {
                    throw error("a lone low surrogate escape")
                }
                out.append(contentsOf: Unicode.UTF8.encode(Unicode.Scalar(scalar)!)!)
            default:
                throw error("invalid escape")
            }
        }
        let length = UInt32(out.count - lengthAt - 4)
        out.withUnsafeMutableBytes { $0.storeBytes(of: length.littleEndian, toByteOffset: lengthAt, as: UInt32.self) }
    }

    private static func isDigit(_ byte: UInt8?) -> Bool { byte.map { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } ?? false }

    /// Appends the run of digits at `position` and steps past it; returns how many.
    @discardableResult
    private mutating func appendDigits(into out: inout [UInt8]) -> Int {
        let start = position
        while Self.isDigit(peek()) { position += 1 }
        Self.append(text.baseAddress! + start, count: position - start, to: &out)
        return position - start
    }

    /// Numbers become `d`, an optional `-`, the significant digits (no leading or trailing
    /// zeros), `e`, the decimal exponent, `;`: equal values, equal encodings.
    private mutating func number(into out: inout [UInt8]) throws(JSONSyntaxError) {
        out.append(UInt8(ascii: "d"))
        let signAt = out.count
        if peek() == UInt8(ascii: "-") {
            out.append(UInt8(ascii: "-"))
            position += 1
        }
        let digitsStart = out.count
        var exponent = 0
        guard Self.isDigit(peek()) else { throw error("expected a digit") }
        if peek() == UInt8(ascii: "0") {
            position += 1
            if Self.isDigit(peek()) { throw error("a number with a leading zero") }
        } else {
            appendDigits(into: &out)
        }
        if peek() == UInt8(ascii: ".") {
            position += 1
            guard Self.isDigit(peek()) else { throw error("expected a digit after the decimal point") }
            exponent -= appendDigits(into: &out)
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            position += 1
            var negative = false
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") {
                negative = text[position] == UInt8(ascii: "-")
                position += 1
            }
            guard Self.isDigit(peek()) else { throw error("expected a digit in the exponent") }
            var written = 0
            while Self.isDigit(peek()) {
                written = written * 10 + Int(text[position] - UInt8(ascii: "0"))
                if written > 1_000_000_000 { throw error("a number's exponent is too large") }
                position += 1
            }
            exponent += negative ? -written : written
        }
        // Keep the significant digits only: leading zeros do not count, trailing ones move
        // into the exponent. Zero has one encoding, whatever its sign or exponent.
        var last = out.count
        while last > digitsStart && out[last - 1] == UInt8(ascii: "0") {
            last -= 1
            exponent += 1
        }
        var first = digitsStart
        while first < last && out[first] == UInt8(ascii: "0") { first += 1 }
        if first == last {
            out.removeSubrange(signAt...)
            out.append(contentsOf: "0e0;".utf8)
            return
        }
        out.removeSubrange(last...)
        if first > digitsStart { out.removeSubrange(digitsStart..<first) }
        out.append(UInt8(ascii: "e"))
        if exponent < 0 {
            out.append(UInt8(ascii: "-"))
            exponent = -exponent
        }
        let exponentStart = out.count
        repeat {
            out.append(UInt8(ascii: "0") + UInt8(exponent % 10))
            exponent /= 10
        } while exponent > 0
        out[exponentStart...].reverse()
        out.append(UInt8(ascii: ";"))
    }
}
