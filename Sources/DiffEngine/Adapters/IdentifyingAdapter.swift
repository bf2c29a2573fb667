/// An adapter that can also hand out a row's identity as a value. A stateful `Differ`
/// uses it to keep identities instead of rows: to verify matches exactly and to name
/// deleted rows (the legacy live-query event's `oldDocuments`, without the documents).
public protocol IdentifyingAdapter: RowAdapter {
    /// The identity as a value.
    associatedtype Identity: Hashable
    /// The identity of `row`; equal identities exactly when `identitiesEqual` says so.
    func identity(of row: Row) -> Identity
}

extension IdentifiableAdapter: IdentifyingAdapter {
    /// The row's `id`.
    @inlinable
    public func identity(of row: Element) -> Element.ID { row.id }
}

extension HashableAdapter: IdentifyingAdapter {
    /// The value itself.
    @inlinable
    public func identity(of row: Element) -> Element { row }
}

extension KeyPathAdapter: IdentifyingAdapter {
    /// The value at the identity key path.
    @inlinable
    public func identity(of row: Row) -> ID { read(row, identity, at: identityOffset) }
}

extension ByteRowAdapter: IdentifyingAdapter {
    /// The identity bytes.
    public func identity(of row: ByteRow) -> [UInt8] { Array(bytes[row.identity]) }
}

/// Adapters whose identity keys and equality are functions of a row's value, as a value
/// type's are: rows with equal bytes have equal keys and identities, and are equal exactly
/// when the row is equal to itself. A stateful differ keeping the snapshot then compares
/// such rows with the previous ones as bytes first, and asks the adapter only about the
/// rows whose bytes changed. The library's `Identifiable`, `Hashable` and key-path adapters
/// conform; public only so that test adapters can.
public protocol _ValueRowAdapter {}

extension IdentifiableAdapter: _ValueRowAdapter {}
extension HashableAdapter: _ValueRowAdapter {}
extension KeyPathAdapter: _ValueRowAdapter {}
