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
