// Rows read through their `RowLayout`: 8-byte integer fields loaded where they lie, with no
// call to the adapter a row. Equal values are equal bits, so these loops compare bits.

/// The number of leading rows of `old` and `new` (`count` at most) whose identity and
/// content fields are equal.
@inlinable
internal func _integerPrefixLength(_ old: UnsafeRawPointer, _ new: UnsafeRawPointer, count: Int, stride: Int,
                                   identity: Int, contents: [Int]) -> Int {
    if contents.count == 1 {
        let content = contents[0]
        var prefix = 0
        var left = old, right = new
        while prefix < count
                && left.loadUnaligned(fromByteOffset: identity, as: UInt64.self) == right.loadUnaligned(fromByteOffset: identity, as: UInt64.self)
                && left.loadUnaligned(fromByteOffset: content, as: UInt64.self) == right.loadUnaligned(fromByteOffset: content, as: UInt64.self) {
            prefix += 1
            left += stride
            right += stride
        }
        return prefix
    }
    return contents.withUnsafeBufferPointer { offsets in
        var prefix = 0
        while prefix < count {
            let left = old + prefix &* stride, right = new + prefix &* stride
            if left.loadUnaligned(fromByteOffset: identity, as: UInt64.self) != right.loadUnaligned(fromByteOffset: identity, as: UInt64.self) { break }
            if offsets.contains(where: { left.loadUnaligned(fromByteOffset: $0, as: UInt64.self) != right.loadUnaligned(fromByteOffset: $0, as: UInt64.self) }) { break }
            prefix += 1
        }
        return prefix
    }
}

/// Sets the bit of each paired new row (`pairing[j]` is its old row, or `_unpaired`) whose
/// integer content fields differ from its old row's; whether any did. `new` is the first
/// row of `pairing`.
@inlinable
internal func _markChangedIntegerContents(_ old: UnsafeRawPointer, _ new: UnsafeRawPointer, stride: Int, contents: [Int],
                                          pairing: UnsafeBufferPointer<UInt32>, bits: UnsafeMutableBufferPointer<UInt64>) -> Bool {
    var any = false
    if contents.count == 1 {
        // Wrapping arithmetic: indexes and strides of rows in memory cannot overflow, and a
        // checked multiply a row costs as much as the comparison.
        let oldField = old + contents[0]
        var newField = new + contents[0]
        for newIndex in pairing.indices {
            let oldIndex = pairing[newIndex]
            if oldIndex != _unpaired
                && oldField.loadUnaligned(fromByteOffset: Int(truncatingIfNeeded: oldIndex) &* stride, as: UInt64.self)
                    != newField.loadUnaligned(as: UInt64.self) {
                bits[newIndex &>> 6] |= 1 &<< UInt64(truncatingIfNeeded: newIndex & 63)
                any = true
            }
            newField += stride
        }
        return any
    }
    contents.withUnsafeBufferPointer { offsets in
        for newIndex in pairing.indices {
            let oldIndex = pairing[newIndex]
            guard oldIndex != _unpaired else { continue }
            let left = old + Int(truncatingIfNeeded: oldIndex) &* stride, right = new + newIndex &* stride
            if offsets.contains(where: { left.loadUnaligned(fromByteOffset: $0, as: UInt64.self) != right.loadUnaligned(fromByteOffset: $0, as: UInt64.self) }) {
                bits[newIndex &>> 6] |= 1 &<< UInt64(newIndex & 63)
                any = true
            }
        }
    }
    return any
}

/// Rows whose equal bytes make them equal (a layout with `equalBytesAreEqualRows` and known
/// floating-point fields): two rows are equal, in identity and content, when their bytes are
/// and none of those fields holds a NaN. Up to four fields of each width; a layout with more
/// gives none, and rows are compared through the adapter.
@usableFromInline
internal struct _EqualBytes {
    @usableFromInline let size: Int
    @usableFromInline let doubles: (Int, Int, Int, Int)
    @usableFromInline let doubleCount: Int
    @usableFromInline let floats: (Int, Int, Int, Int)
    @usableFromInline let floatCount: Int

    /// The check for rows of `size` bytes read through `layout`, or nil when it cannot tell.
    @inlinable
    init?(_ layout: RowLayout?, rowSize size: Int) {
        guard let layout, layout.equalBytesAreEqualRows, let fields = layout.floatingPointFields,
              fields.doubleOffsets.count <= 4, fields.floatOffsets.count <= 4 else { return nil }
        precondition(fields.doubleOffsets.allSatisfy { $0 >= 0 && $0 + 8 <= size } && fields.floatOffsets.allSatisfy { $0 >= 0 && $0 + 4 <= size },
                     "a RowLayout offset lies outside the row")
        func four(_ offsets: [Int]) -> (Int, Int, Int, Int) {
            func at(_ index: Int) -> Int { index < offsets.count ? offsets[index] : 0 }
            return (at(0), at(1), at(2), at(3))
        }
        self.size = size
        doubles = four(fields.doubleOffsets)
        doubleCount = fields.doubleOffsets.count
        floats = four(fields.floatOffsets)
        floatCount = fields.floatOffsets.count
    }

    /// Whether the rows at `lhs` and `rhs` are equal by their bytes alone; false means "ask the adapter".
    @inlinable @inline(__always)
    func equal(_ lhs: UnsafeRawPointer, _ rhs: UnsafeRawPointer) -> Bool {
        _bytesEqual(lhs, rhs, size) && !holdsNaN(lhs)
    }

    /// How many leading rows of `count` at `old` and `new` are equal by their bytes alone.
    /// Not inlined: one tight loop in the library serves every row type.
    @usableFromInline
    func prefixLength(_ old: UnsafeRawPointer, _ new: UnsafeRawPointer, count: Int, stride: Int) -> Int {
        var length = 0, left = old, right = new
        while length < count && equal(left, right) {
            length += 1
            left += stride
            right += stride
        }
        return length
    }

    /// Whether one of the row's floating-point fields holds a NaN, read from its bits.
    @inlinable @inline(__always)
    func holdsNaN(_ row: UnsafeRawPointer) -> Bool {
        @inline(__always) func isNaN(_ bits: UInt64) -> Bool { bits & 0x7fff_ffff_ffff_ffff > 0x7ff0_0000_0000_0000 }
        @inline(__always) func isNaN(_ bits: UInt32) -> Bool { bits & 0x7fff_ffff > 0x7f80_0000 }
        var nan = false
        if doubleCount > 0 { nan = nan || isNaN(row.loadUnaligned(fromByteOffset: doubles.0, as: UInt64.self)) }
        if doubleCount > 1 { nan = nan || isNaN(row.loadUnaligned(fromByteOffset: doubles.1, as: UInt64.self)) }
        if doubleCount > 2 { nan = nan || isNaN(row.loadUnaligned(fromByteOffset: doubles.2, as: UInt64.self)) }
        if doubleCount > 3 { nan = nan || isNaN(row.loadUnaligned(fromByteOffset: doubles.3, as: UInt64.self)) }
        if floatCount > 0 { nan = nan || isNaN(row.loadUnaligned(fromByteOffset: floats.0, as: UInt32.self)) }
        if floatCount > 1 { nan = nan || isNaN(row.loadUnaligned(fromByteOffset: floats.1, as: UInt32.self)) }
        if floatCount > 2 { nan = nan || isNaN(row.loadUnaligned(fromByteOffset: floats.2, as: UInt32.self)) }
        if floatCount > 3 { nan = nan || isNaN(row.loadUnaligned(fromByteOffset: floats.3, as: UInt32.self)) }
        return nan
    }
}
