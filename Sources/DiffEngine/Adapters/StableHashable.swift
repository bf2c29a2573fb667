#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A value with a 64-bit hash that is the same in every process and on every machine,
/// unlike Swift's per-process seeded `Hasher`, so that hashes may be persisted or sent
/// over a wire (a stateful differ's saved state, a service's row hashes).
///
/// Canonical encodings (all hashes are XXH3-64 with the seed `DC_HASH_SEED`,
/// `0x44696666456e6731`):
/// - fixed-width integers and `Bool`: the value itself, sign-extended to 64 bits — an
///   exact key, so `stableHashIsExact` is true and no equality check is ever needed;
/// - `String` and `Substring`: XXH3-64 of the UTF-8 bytes (no Unicode normalization, so
///   `"é"` and `"e\u{301}"` differ);
/// - `[UInt8]`: XXH3-64 of the bytes;
/// - `UUID`: XXH3-64 of its 16 bytes in RFC 4122 order;
/// - `Double`: XXH3-64 of the 8-byte little-endian IEEE 754 bits, with `-0.0` as `+0.0`;
/// - several fields (key-path contents, multi-column keys): the field hashes folded left to
///   right with `dc_hash_combine`, XXH3-64 of the 16 little-endian bytes of the running
///   hash and the next field's hash, starting from the first field's hash.
public protocol StableHashable: Hashable {
    /// The stable 64-bit hash (or exact key) of this value.
    var stableHash: UInt64 { get }
    /// Whether distinct values always have distinct `stableHash`es (true for integers);
    /// the engine then pairs rows by the key alone.
    static var stableHashIsExact: Bool { get }
}

extension StableHashable {
    /// False by default: a hash, verified with `==`.
    @inlinable
    public static var stableHashIsExact: Bool { false }
}

extension Int: StableHashable {
    /// True: distinct values have distinct keys.
    @inlinable public var stableHash: UInt64 { UInt64(bitPattern: Int64(self)) }
    @inlinable public static var stableHashIsExact: Bool { true }
}
extension Int64: StableHashable {
    /// True: distinct values have distinct keys.
    @inlinable public var stableHash: UInt64 { UInt64(bitPattern: self) }
    @inlinable public static var stableHashIsExact: Bool { true }
}
extension Int32: StableHashable {
    /// True: distinct values have distinct keys.
    @inlinable public var stableHash: UInt64 { UInt64(bitPattern: Int64(self)) }
    @inlinable public static var stableHashIsExact: Bool { true }
}
extension Int16: StableHashable {
    /// True: distinct values have distinct keys.
    @inlinable public var stableHash: UInt64 { UInt64(bitPattern: Int64(self)) }
    @inlinable public static var stableHashIsExact: Bool { true }
}
extension Int8: StableHashable {
    /// True: distinct values have distinct keys.
    @inlinable public var stableHash: UInt64 { UInt64(bitPattern: Int64(self)) }
    @inlinable public static var stableHashIsExact: Bool { true }
}
extension UInt: StableHashable {
    /// True: distinct values have distinct keys.
    @inlinable public var stableHash: UInt64 { UInt64(self) }
    @inlinable public static var stableHashIsExact: Bool { true }
}
extension UInt64: StableHashable {
    /// True: distinct values have distinct keys.
    @inlinable public var stableHash: UInt64 { self }
    @inlinable public static var stableHashIsExact: Bool { true }
}
extension UInt32: StableHashable {
    /// True: distinct values have distinct keys.
    @inlinable public var stableHash: UInt64 { UInt64(self) }
    @inlinable public static var stableHashIsExact: Bool { true }
}
extension UInt16: StableHashable {
    /// True: distinct values have distinct keys.
    @inlinable public var stableHash: UInt64 { UInt64(self) }
    @inlinable public static var stableHashIsExact: Bool { true }
}
extension UInt8: StableHashable {
    /// True: distinct values have distinct keys.
    @inlinable public var stableHash: UInt64 { UInt64(self) }
    @inlinable public static var stableHashIsExact: Bool { true }
}
extension Bool: StableHashable {
    /// True: distinct values have distinct keys.
    @inlinable public var stableHash: UInt64 { self ? 1 : 0 }
    @inlinable public static var stableHashIsExact: Bool { true }
}

extension String: StableHashable {
    /// XXH3-64 of the UTF-8 bytes.
    @inlinable
    public var stableHash: UInt64 {
        if let hash = utf8.withContiguousStorageIfAvailable({ _stableHash(UnsafeRawBufferPointer($0)) }) {
            return hash
        }
        var copy = self // bridged or foreign strings: make them native and contiguous once
        return copy.withUTF8 { _stableHash(UnsafeRawBufferPointer($0)) }
    }
}

extension Substring: StableHashable {
    /// XXH3-64 of the UTF-8 bytes, as for the same `String`.
    @inlinable
    public var stableHash: UInt64 {
        if let hash = utf8.withContiguousStorageIfAvailable({ _stableHash(UnsafeRawBufferPointer($0)) }) {
            return hash
        }
        return String(self).stableHash
    }
}

extension Array: StableHashable where Element == UInt8 {
    /// XXH3-64 of the bytes.
    @inlinable
    public var stableHash: UInt64 {
        withUnsafeBytes { _stableHash($0) }
    }
}

extension UUID: StableHashable {
    /// XXH3-64 of the 16 bytes in RFC 4122 order.
    @inlinable
    public var stableHash: UInt64 {
        withUnsafeBytes(of: uuid) { _stableHash($0) }
    }
}

extension Double: StableHashable {
    /// XXH3-64 of the 8 little-endian IEEE 754 bytes, with `-0.0` as `+0.0`.
    @inlinable
    public var stableHash: UInt64 {
        let bits = (self == 0 ? 0.0 : self).bitPattern.littleEndian
        return withUnsafeBytes(of: bits) { _stableHash($0) }
    }
}

/// The stable hash of several hashes folded left to right (see `StableHashable`).
@inlinable
public func combineStableHashes(_ first: UInt64, _ second: UInt64) -> UInt64 {
    _combineHashes(first, second)
}

/// XXH3-64 with the engine's fixed seed over raw bytes: the stable hash of a byte row.
@inlinable
public func stableHash(bytes: UnsafeRawBufferPointer) -> UInt64 {
    _stableHash(bytes)
}

/// XXH3-64 of raw bytes with the caller's seed.
///
/// With a seed drawn once per process, it hashes data from outside (file contents, client
/// ids) so that whoever wrote the data cannot aim collisions at it; the `diffengine` CLI
/// hashes row contents so. With a fixed seed it is stable across processes and machines,
/// like ``stableHash(bytes:)``.
/// - Parameters:
///   - bytes: the bytes to hash.
///   - seed: the XXH3 seed.
/// - Complexity: O(n) in the number of bytes.
@inlinable
public func stableHash(bytes: UnsafeRawBufferPointer, seed: UInt64) -> UInt64 {
    _seededHash(bytes, seed: seed)
}
