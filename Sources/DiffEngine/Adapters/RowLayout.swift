/// What the engine may read straight from a row's memory instead of asking its adapter: a
/// promise an adapter makes about its rows (``RowAdapter/rowLayout``).
///
/// With a layout, the engine compares rows a block of bytes at a time and reads integer
/// fields where they lie, and asks the adapter only about the rows whose bytes changed. The
/// library's `Identifiable`, `Hashable` and key-path adapters declare one where it holds; an
/// adapter of your own that declares the same layout gets exactly the same treatment.
///
/// ```swift
/// struct Point { var id: Int; var x: Int; var y: Int }
/// struct PointAdapter: IdentifyingAdapter {
///     var rowLayout: RowLayout? {
///         RowLayout(equalBytesAreEqualRows: true,
///                   integerIdentityOffset: MemoryLayout<Point>.offset(of: \.id),
///                   integerContentOffsets: [MemoryLayout<Point>.offset(of: \.x)!, MemoryLayout<Point>.offset(of: \.y)!])
///     }
///     var identityKeysAreExact: Bool { true }
///     func identityKey(of row: Point) -> UInt64 { UInt64(bitPattern: Int64(row.id)) }
///     // …
/// }
/// ```
///
/// - Important: A layout is a promise. A layout that does not hold gives wrong answers; it
///   never makes the engine read out of bounds (offsets are checked against the row's size).
public struct RowLayout: Hashable, Sendable {
    /// Rows whose bytes are equal have equal identities and equal identity keys, and have
    /// equal contents exactly when the row is equal to itself (a field holding NaN is not).
    /// True for a value type whose identity key and equality read only its stored fields; false
    /// for rows whose equality follows references (a class whose fields may change in place).
    public var equalBytesAreEqualRows: Bool
    /// The byte offset of the identity when it is an 8-byte integer whose bits are the row's
    /// identity key (the adapter's keys are then exact), or nil.
    public var integerIdentityOffset: Int?
    /// The byte offsets of the content fields when every field that content equality compares
    /// is an 8-byte integer at one of them: a paired row is updated exactly when one of these
    /// fields' bits differ. Nil otherwise.
    public var integerContentOffsets: [Int]?
    /// Where the floating-point fields that identity or content equality reads lie, when
    /// equal bytes are equal rows: a row is then equal to itself unless one of them holds a
    /// NaN, which the engine tells from their bits, and two rows with equal bytes are equal
    /// without a call to the adapter. Nil when not known: the engine asks the adapter.
    public var floatingPointFields: FloatingPointFields?

    /// The byte offsets of a row's floating-point fields (see ``RowLayout/floatingPointFields``).
    public struct FloatingPointFields: Hashable, Sendable {
        /// Fields of 8 bytes: `Double`, `Date`, and their optionals (whose payload is read
        /// whether or not it is there).
        public var doubleOffsets: [Int]
        /// Fields of 4 bytes: `Float` and its optional.
        public var floatOffsets: [Int]

        /// Fields at these offsets (none for rows without floating-point fields).
        public init(doubleOffsets: [Int] = [], floatOffsets: [Int] = []) {
            self.doubleOffsets = doubleOffsets
            self.floatOffsets = floatOffsets
        }
    }

    /// Creates a layout.
    /// - Parameters:
    ///   - equalBytesAreEqualRows: whether equal bytes mean equal rows (see the property).
    ///   - integerIdentityOffset: where an 8-byte integer identity lies, or nil.
    ///   - integerContentOffsets: where the 8-byte integer content fields lie, when content is
    ///     only such fields; or nil.
    ///   - floatingPointFields: where the floating-point fields lie, when known; or nil.
    public init(equalBytesAreEqualRows: Bool, integerIdentityOffset: Int? = nil, integerContentOffsets: [Int]? = nil,
                floatingPointFields: FloatingPointFields? = nil) {
        self.equalBytesAreEqualRows = equalBytesAreEqualRows
        self.integerIdentityOffset = integerIdentityOffset
        self.integerContentOffsets = integerContentOffsets
        self.floatingPointFields = floatingPointFields
    }

    /// The offsets of the identity and the contents when both are 8-byte integers, checked to
    /// lie inside a row of `size` bytes.
    @inlinable
    internal func _integerFields(rowSize size: Int) -> (identity: Int, contents: [Int])? {
        guard let identity = integerIdentityOffset, let contents = integerContentOffsets else { return nil }
        precondition(identity >= 0 && identity + 8 <= size && contents.allSatisfy { $0 >= 0 && $0 + 8 <= size },
                     "a RowLayout offset lies outside the row")
        return (identity, contents)
    }

    /// The content offsets when they are all 8-byte integers, checked as above.
    @inlinable
    internal func _integerContents(rowSize size: Int) -> [Int]? {
        guard let contents = integerContentOffsets else { return nil }
        precondition(contents.allSatisfy { $0 >= 0 && $0 + 8 <= size }, "a RowLayout offset lies outside the row")
        return contents
    }
}
