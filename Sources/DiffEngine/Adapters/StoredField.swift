import Foundation

/// A stored field of a common type, compared where it lies in its row with its type's own
/// `==` (no generic call, no copy of the row or of the field). Key paths whose fields are
/// all of these types compare rows this way; others compare through the key paths' types.
@usableFromInline
internal struct _StoredField {
    @usableFromInline
    enum Kind {
        /// Integers by width; the `signed` ones hash sign-extended.
        case bits8, bits4, bits2, bits1, signed4, signed2, signed1, uuid, double, float, date, string
        case optionalInt, optionalDouble, optionalDate, optionalString, optionalBool, optionalUUID
    }

    @usableFromInline let kind: Kind
    @usableFromInline let offset: Int

    /// The field of `path`, when it is stored and of a type listed in `Kind`.
    @inlinable
    init?<Row, Value>(_ path: KeyPath<Row, Value>) {
        guard let offset = MemoryLayout<Row>.offset(of: path), let kind = Self.kind(of: Value.self) else { return nil }
        self.kind = kind
        self.offset = offset
    }

    /// Integers and `Bool` compare by their bits (equal values, equal bits); floating-point
    /// values, dates, strings and optionals by their `==` (so `-0.0 == 0.0`, `nan != nan`).
    @inlinable
    static func kind(of type: Any.Type) -> Kind? {
        switch type {
        case is Int.Type, is UInt.Type, is Int64.Type, is UInt64.Type: .bits8
        case is Int32.Type: .signed4
        case is UInt32.Type: .bits4
        case is Int16.Type: .signed2
        case is UInt16.Type: .bits2
        case is Int8.Type: .signed1
        case is UInt8.Type, is Bool.Type: .bits1
        case is UUID.Type: .uuid
        case is Double.Type: .double
        case is Float.Type: .float
        case is Date.Type: .date
        case is String.Type: .string
        case is Int?.Type: .optionalInt
        case is Double?.Type: .optionalDouble
        case is Date?.Type: .optionalDate
        case is String?.Type: .optionalString
        case is Bool?.Type: .optionalBool
        case is UUID?.Type: .optionalUUID
        default: nil
        }
    }

    /// Whether the field is equal in the rows at `lhs` and `rhs`.
    @inlinable @inline(__always)
    func equal(_ lhs: UnsafeRawPointer, _ rhs: UnsafeRawPointer) -> Bool {
        let left = lhs + offset, right = rhs + offset
        switch kind {
        case .bits8: return left.loadUnaligned(as: UInt64.self) == right.loadUnaligned(as: UInt64.self)
        case .bits4, .signed4: return left.loadUnaligned(as: UInt32.self) == right.loadUnaligned(as: UInt32.self)
        case .bits2, .signed2: return left.loadUnaligned(as: UInt16.self) == right.loadUnaligned(as: UInt16.self)
        case .bits1, .signed1: return left.load(as: UInt8.self) == right.load(as: UInt8.self)
        case .uuid: return Self.same(left, right, UUID.self)
        case .double: return Self.same(left, right, Double.self)
        case .float: return Self.same(left, right, Float.self)
        case .date: return Self.same(left, right, Date.self)
        case .string: return Self.same(left, right, String.self)
        case .optionalInt: return Self.same(left, right, Int?.self)
        case .optionalDouble: return Self.same(left, right, Double?.self)
        case .optionalDate: return Self.same(left, right, Date?.self)
        case .optionalString: return Self.same(left, right, String?.self)
        case .optionalBool: return Self.same(left, right, Bool?.self)
        case .optionalUUID: return Self.same(left, right, UUID?.self)
        }
    }

    /// The field's hash in the row at `row`, as a key-path adapter defines it: the stable
    /// hash of a `StableHashable` type, the per-process `hashValue` of the others (`Float`,
    /// `Date`, the optionals).
    @inlinable
    func hashKey(_ row: UnsafeRawPointer) -> UInt64 {
        let field = row + offset
        switch kind {
        case .bits8: return field.loadUnaligned(as: UInt64.self)
        case .bits4: return UInt64(field.loadUnaligned(as: UInt32.self))
        case .bits2: return UInt64(field.loadUnaligned(as: UInt16.self))
        case .bits1: return UInt64(field.load(as: UInt8.self))
        case .signed4: return UInt64(bitPattern: Int64(field.loadUnaligned(as: Int32.self)))
        case .signed2: return UInt64(bitPattern: Int64(field.loadUnaligned(as: Int16.self)))
        case .signed1: return UInt64(bitPattern: Int64(field.load(as: Int8.self)))
        case .uuid: return field.assumingMemoryBound(to: UUID.self).pointee.stableHash
        case .double: return field.loadUnaligned(as: Double.self).stableHash
        case .string: return field.assumingMemoryBound(to: String.self).pointee.stableHash
        case .float: return Self.hashValueKey(field, Float.self)
        case .date: return Self.hashValueKey(field, Date.self)
        case .optionalInt: return Self.hashValueKey(field, Int?.self)
        case .optionalDouble: return Self.hashValueKey(field, Double?.self)
        case .optionalDate: return Self.hashValueKey(field, Date?.self)
        case .optionalString: return Self.hashValueKey(field, String?.self)
        case .optionalBool: return Self.hashValueKey(field, Bool?.self)
        case .optionalUUID: return Self.hashValueKey(field, UUID?.self)
        }
    }

    @inlinable
    static func hashValueKey<Value: Hashable>(_ field: UnsafeRawPointer, _: Value.Type) -> UInt64 {
        UInt64(bitPattern: Int64(field.assumingMemoryBound(to: Value.self).pointee.hashValue))
    }

    /// Whether the field holds a value unequal to itself (a NaN, which equal bits do not
    /// make equal).
    @inlinable
    func holdsNaN(_ row: UnsafeRawPointer) -> Bool {
        let field = row + offset
        switch kind {
        case .double: return field.loadUnaligned(as: Double.self).isNaN
        case .float: return field.loadUnaligned(as: Float.self).isNaN
        case .date: return field.loadUnaligned(as: Double.self).isNaN // a Date is its seconds
        case .optionalDouble: return !Self.same(field, field, Double?.self)
        case .optionalDate: return !Self.same(field, field, Date?.self)
        default: return false
        }
    }

    @inlinable
    static func same<Value: Equatable>(_ lhs: UnsafeRawPointer, _ rhs: UnsafeRawPointer, _: Value.Type) -> Bool {
        lhs.assumingMemoryBound(to: Value.self).pointee == rhs.assumingMemoryBound(to: Value.self).pointee
    }
}

/// Up to four stored fields, held inline: an array would be retained and released on
/// every row compared.
@usableFromInline
internal struct _StoredFields {
    @usableFromInline let count: Int
    @usableFromInline let first: _StoredField
    @usableFromInline let second: _StoredField
    @usableFromInline let third: _StoredField
    @usableFromInline let fourth: _StoredField

    /// The offsets of the 8-byte floating-point values among the fields (`Double`, `Date`,
    /// and the payloads of their optionals), up to four, and of the `Float`s: the only
    /// fields whose equal bits can be unequal values (NaN).
    @usableFromInline let doubleOffsets: (Int, Int, Int, Int)
    @usableFromInline let doubleCount: Int
    @usableFromInline let floatOffsets: (Int, Int, Int, Int)
    @usableFromInline let floatCount: Int

    /// Nil for none or more than four.
    @inlinable
    init?(_ fields: [_StoredField]) {
        guard let first = fields.first, fields.count <= 4 else { return nil }
        count = fields.count
        self.first = first
        second = fields.count > 1 ? fields[1] : first
        third = fields.count > 2 ? fields[2] : first
        fourth = fields.count > 3 ? fields[3] : first
        // Filled in place, with no array: an adapter is made for every `diff(_:_:identity:content:)`.
        var doubles = (0, 0, 0, 0), doubleCount = 0, floats = (0, 0, 0, 0), floatCount = 0
        func append(_ offset: Int, to offsets: inout (Int, Int, Int, Int), count: inout Int) {
            switch count {
            case 0: offsets = (offset, offset, offset, offset)
            case 1: offsets.1 = offset
            case 2: offsets.2 = offset
            default: offsets.3 = offset
            }
            count += 1
        }
        for field in fields {
            switch field.kind {
            case .double, .date, .optionalDouble, .optionalDate: append(field.offset, to: &doubles, count: &doubleCount)
            case .float: append(field.offset, to: &floats, count: &floatCount)
            default: break
            }
        }
        doubleOffsets = doubles
        self.doubleCount = doubleCount
        floatOffsets = floats
        self.floatCount = floatCount
    }

    /// Whether every field is equal in the rows at `lhs` and `rhs`, `size` bytes each:
    /// rows whose bytes are all equal are, unless a field holds a NaN; the others are
    /// compared field by field.
    @inlinable
    func equal(_ lhs: UnsafeRawPointer, _ rhs: UnsafeRawPointer, rowSize size: Int) -> Bool {
        if _bytesEqual(lhs, rhs, size) && !holdsNaN(lhs) { return true }
        return equal(lhs, rhs)
    }

    /// Whether a floating-point field may hold a NaN, read from its bits with no dispatch on
    /// kinds (an optional's payload is read whether or not it is there: a `nil` whose bits
    /// look like a NaN only sends the rows to the field-by-field comparison).
    @inlinable
    func holdsNaN(_ row: UnsafeRawPointer) -> Bool {
        @inline(__always) func isNaN(_ bits: UInt64) -> Bool { bits & 0x7fff_ffff_ffff_ffff > 0x7ff0_0000_0000_0000 }
        @inline(__always) func isNaN(_ bits: UInt32) -> Bool { bits & 0x7fff_ffff > 0x7f80_0000 }
        var nan = false
        if doubleCount > 0 { nan = nan || isNaN(row.loadUnaligned(fromByteOffset: doubleOffsets.0, as: UInt64.self)) }
        if doubleCount > 1 { nan = nan || isNaN(row.loadUnaligned(fromByteOffset: doubleOffsets.1, as: UInt64.self)) }
        if doubleCount > 2 { nan = nan || isNaN(row.loadUnaligned(fromByteOffset: doubleOffsets.2, as: UInt64.self)) }
        if doubleCount > 3 { nan = nan || isNaN(row.loadUnaligned(fromByteOffset: doubleOffsets.3, as: UInt64.self)) }
        if floatCount > 0 { nan = nan || isNaN(row.loadUnaligned(fromByteOffset: floatOffsets.0, as: UInt32.self)) }
        if floatCount > 1 { nan = nan || isNaN(row.loadUnaligned(fromByteOffset: floatOffsets.1, as: UInt32.self)) }
        if floatCount > 2 { nan = nan || isNaN(row.loadUnaligned(fromByteOffset: floatOffsets.2, as: UInt32.self)) }
        if floatCount > 3 { nan = nan || isNaN(row.loadUnaligned(fromByteOffset: floatOffsets.3, as: UInt32.self)) }
        return nan
    }

    /// The fields' hashes in the row at `row`, folded in order with `combineStableHashes`.
    @inlinable
    func hashKey(_ row: UnsafeRawPointer) -> UInt64 {
        var folded = first.hashKey(row)
        if count > 1 { folded = combineStableHashes(folded, second.hashKey(row)) }
        if count > 2 { folded = combineStableHashes(folded, third.hashKey(row)) }
        if count > 3 { folded = combineStableHashes(folded, fourth.hashKey(row)) }
        return folded
    }

    /// Whether every field is equal in the rows at `lhs` and `rhs`.
    @inlinable
    func equal(_ lhs: UnsafeRawPointer, _ rhs: UnsafeRawPointer) -> Bool {
        guard first.equal(lhs, rhs) else { return false }
        if count > 1 && !second.equal(lhs, rhs) { return false }
        if count > 2 && !third.equal(lhs, rhs) { return false }
        return count < 4 || fourth.equal(lhs, rhs)
    }
}

/// Whether `size` bytes at `lhs` and `rhs` are equal, compared 8 bytes at a time (no call).
@inlinable
internal func _bytesEqual(_ lhs: UnsafeRawPointer, _ rhs: UnsafeRawPointer, _ size: Int) -> Bool {
    let words = size &>> 3
    var differ: UInt64 = 0
    for word in 0..<words {
        differ |= lhs.loadUnaligned(fromByteOffset: word &<< 3, as: UInt64.self)
            ^ rhs.loadUnaligned(fromByteOffset: word &<< 3, as: UInt64.self)
    }
    for offset in (words &<< 3)..<size {
        differ |= UInt64(lhs.load(fromByteOffset: offset, as: UInt8.self) ^ rhs.load(fromByteOffset: offset, as: UInt8.self))
    }
    return differ == 0
}

extension RowLayout.FloatingPointFields {
    /// The floating-point fields of stored fields: the identity's and the contents'.
    @inlinable
    init(_ identity: _StoredFields, _ contents: _StoredFields) {
        var doubles: [Int] = [], floats: [Int] = []
        for fields in [identity, contents] {
            let doubleOffsets = [fields.doubleOffsets.0, fields.doubleOffsets.1, fields.doubleOffsets.2, fields.doubleOffsets.3]
            let floatOffsets = [fields.floatOffsets.0, fields.floatOffsets.1, fields.floatOffsets.2, fields.floatOffsets.3]
            doubles += doubleOffsets.prefix(fields.doubleCount)
            floats += floatOffsets.prefix(fields.floatCount)
        }
        self.init(doubleOffsets: doubles, floatOffsets: floats)
    }
}
