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
