#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#elseif os(Windows)
import ucrt
#endif

/// One row of a byte buffer: the byte ranges of its identity and its content.
public struct ByteRow: Hashable, Sendable {
    /// Where the row's identity bytes are.
    public var identity: Range<Int>
    /// Where the row's content bytes are.
    public var content: Range<Int>

    /// Creates a row from the byte ranges of its identity and its content.
    @inlinable
    public init(identity: Range<Int>, content: Range<Int>) {
        self.identity = identity
        self.content = content
    }
}

/// Reads rows that are byte spans of one buffer (a file read whole, both files of a diff
/// side by side): identity and content are the exact bytes of their spans, so text is
/// compared without Unicode normalization. Identity keys are XXH3-64 of the identity
/// bytes, hashed in C straight from the buffer, and verified byte for byte.
///
/// - Note: Put both sides' rows in one buffer; a `ByteRow` of the old side and one of the
///   new side are compared through it.
/// - Complexity: hashing is one pass over the identity bytes; comparisons are `memcmp`.
public struct ByteRowAdapter: RowAdapter, Sendable {
    /// The rows this adapter reads: byte spans of ``bytes``.
    public typealias Row = ByteRow

    /// The buffer every row's spans point into.
    public let bytes: [UInt8]

    /// Creates an adapter over `bytes`; every row's spans must lie inside it.
    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// XXH3-64 of the row's identity bytes (its stable hash).
    public func identityKey(of row: ByteRow) -> UInt64 {
        bytes.withUnsafeBytes { stableHash(bytes: UnsafeRawBufferPointer(rebasing: $0[row.identity])) }
    }

    /// Hashes every row's identity bytes in C, straight from the buffer.
    public func writeIdentityKeys(of rows: UnsafeBufferPointer<ByteRow>, to keys: UnsafeMutableBufferPointer<UInt64>) {
        precondition(rows.count == keys.count, "one key a row")
        let offsets = rows.map { UInt64($0.identity.lowerBound) }
        let lengths = rows.map { UInt64($0.identity.count) }
        bytes.withUnsafeBytes { buffer in
            offsets.withUnsafeBufferPointer { offsetBuffer in
                lengths.withUnsafeBufferPointer { lengthBuffer in
                    _hashSpans(buffer, offsets: offsetBuffer, lengths: lengthBuffer, into: keys)
                }
            }
        }
    }

    /// Whether the two rows' identity bytes are equal.
    public func identitiesEqual(_ lhs: ByteRow, _ rhs: ByteRow) -> Bool {
        spansEqual(lhs.identity, rhs.identity)
    }

    /// Whether the two rows' content bytes are equal.
    public func contentsEqual(_ lhs: ByteRow, _ rhs: ByteRow) -> Bool {
        spansEqual(lhs.content, rhs.content)
    }

    /// XXH3-64 of the row's content bytes (its stable hash).
    public func contentHash(of row: ByteRow) -> UInt64 {
        bytes.withUnsafeBytes { stableHash(bytes: UnsafeRawBufferPointer(rebasing: $0[row.content])) }
    }

    /// The identity bytes as UTF-8 text, for messages.
    public func identityDescription(of row: ByteRow) -> String {
        String(decoding: bytes[row.identity], as: UTF8.self)
    }

    /// XXH3 of each row's identity bytes with a per-process secret seed.
    public func writeSeededIdentityKeys(of rows: UnsafeBufferPointer<ByteRow>, to keys: UnsafeMutableBufferPointer<UInt64>) -> Bool {
        precondition(rows.count == keys.count, "one key a row")
        bytes.withUnsafeBytes { buffer in
            for index in rows.indices {
                keys[index] = _secretHash(UnsafeRawBufferPointer(rebasing: buffer[rows[index].identity]))
            }
        }
        return true
    }

    private func spansEqual(_ lhs: Range<Int>, _ rhs: Range<Int>) -> Bool {
        precondition(lhs.lowerBound >= 0 && lhs.upperBound <= bytes.count && rhs.lowerBound >= 0
                     && rhs.upperBound <= bytes.count, "a row's span lies outside the buffer")
        guard lhs.count == rhs.count else { return false }
        if lhs.isEmpty || lhs == rhs { return true }
        return bytes.withUnsafeBytes { buffer in
            memcmp(buffer.baseAddress! + lhs.lowerBound, buffer.baseAddress! + rhs.lowerBound, lhs.count) == 0
        }
    }
}
