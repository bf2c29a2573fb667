/// The offset of the first byte that is not part of a well-formed UTF-8 sequence (overlong
/// forms, surrogates and code points above U+10FFFF are ill-formed), or nil when all of
/// `bytes` is valid UTF-8.
/// ``JSONDocuments`` and the `diffengine` CLI refuse such input with the offset this returns.
/// - Parameter bytes: the bytes to check.
/// - Returns: the offset of the first ill-formed byte, or nil.
/// - Complexity: O(n), eight ASCII bytes at a time.
public func firstInvalidUTF8Byte(in bytes: UnsafeRawBufferPointer) -> Int? {
    guard let base = bytes.baseAddress else { return nil }
    let count = bytes.count
    var index = 0
    while index < count {
        // Skip runs of ASCII a word at a time.
        while index + 8 <= count && base.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
            index += 8
        }
        guard index < count else { break }
        let lead = bytes[index]
        if lead < 0x80 {
            index += 1
            continue
        }
        let length: Int
        var lower: UInt8 = 0x80, upper: UInt8 = 0xBF // the allowed range of the second byte
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; upper = 0x9F
        case 0xF0: length = 4; lower = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; upper = 0x8F
        default: return index
        }
        guard index + length <= count else { return index }
        guard (lower...upper).contains(bytes[index + 1]) else { return index }
        for continuation in 2..<length where bytes[index + continuation] & 0xC0 != 0x80 {
            return index
        }
        index += length
    }
    return nil
}
