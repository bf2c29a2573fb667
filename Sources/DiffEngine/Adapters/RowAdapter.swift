/// Tells the engine how to read a row type: its identity (which row is it?) and its
/// content (what does it say?). Adapters are the engine's plugins: every built-in way to
/// diff (`Hashable`, `Identifiable`, key paths, strings, byte rows, documents) is one, and
/// any module can add its own without touching the core.
///
/// The engine asks for a 64-bit identity key of every row, pairs rows whose keys are equal
/// and whose identities `identitiesEqual` confirms, and compares the contents of paired
/// rows with `contentsEqual`.
///
/// Requirements that the engine relies on:
/// - rows with equal identities have equal identity keys;
/// - when `identityKeysAreExact` is true, rows with equal keys have equal identities
///   (integer ids); then `identitiesEqual` is never called during pairing;
/// - rows with equal contents have equal content hashes (only callers that keep no rows,
///   such as a ``Differ``, compare contents by hash).
public protocol RowAdapter {
    /// The type of the rows this adapter reads.
    associatedtype Row

    /// Whether identity keys are exact: equal keys always mean equal identities.
    var identityKeysAreExact: Bool { get }

    /// The 64-bit key of a row's identity: a hash, or the identity itself when exact.
    func identityKey(of row: Row) -> UInt64

    /// Writes the identity key of each row in `rows` to `keys` (same count). Override it
    /// when keys are cheaper to compute in bulk (for instance hashing spans of one buffer).
    func writeIdentityKeys(of rows: UnsafeBufferPointer<Row>, to keys: UnsafeMutableBufferPointer<UInt64>)

    /// Whether two rows have the same identity.
    func identitiesEqual(_ lhs: Row, _ rhs: Row) -> Bool

    /// Whether two rows that have the same identity have the same content.
    func contentsEqual(_ lhs: Row, _ rhs: Row) -> Bool

    /// ``identitiesEqual(_:_:)`` of the rows at two addresses. The default reads the rows;
    /// an adapter that can compare fields where they lie overrides it, sparing a copy of
    /// each row (a retain and a release of every string field).
    func _identitiesEqual(at lhs: UnsafePointer<Row>, _ rhs: UnsafePointer<Row>) -> Bool

    /// ``contentsEqual(_:_:)`` of the rows at two addresses (see `_identitiesEqual(at:_:)`).
    func _contentsEqual(at lhs: UnsafePointer<Row>, _ rhs: UnsafePointer<Row>) -> Bool

    /// A 64-bit hash of a row's content, equal for equal contents.
    func contentHash(of row: Row) -> UInt64

    /// Writes the content hash of each row in `rows` to `hashes` (same count). Override it
    /// when hashes are cheaper to compute in bulk.
    func writeContentHashes(of rows: UnsafeBufferPointer<Row>, to hashes: UnsafeMutableBufferPointer<UInt64>)

    /// What the engine may read from a row's memory instead of asking this adapter (see
    /// ``RowLayout``), or nil, the default: rows are then read only through the adapter.
    /// Read once a diff.
    var rowLayout: RowLayout? { get }

    /// A short description of a row's identity, for error messages.
    func identityDescription(of row: Row) -> String

    /// Writes a second key of each row's identity, from a hash seeded with a per-process
    /// secret (Swift's `Hasher`), and returns true; or returns false when the adapter has
    /// none (the default).
    ///
    /// The engine asks for these keys only when many distinct identities share one
    /// identity key — full 64-bit collisions of a public hash, which someone who knows the
    /// hash can craft — and pairs by them instead, so such input costs what random input
    /// costs. Rows with equal identities must get equal keys. Every built-in adapter
    /// provides them.
    /// - Note: An adapter without them, whose own `identityKey(of:)` collides for many
    ///   identities (a constant key, say), makes matching quadratic in the size of each
    ///   colliding class, as a constant `hashValue` does for `Dictionary`.
    func writeSeededIdentityKeys(of rows: UnsafeBufferPointer<Row>, to keys: UnsafeMutableBufferPointer<UInt64>) -> Bool
}

extension RowAdapter {
    /// None by default: rows are read only through the adapter.
    @inlinable
    public var rowLayout: RowLayout? { nil }

    /// By default keys are hashes, verified with ``identitiesEqual(_:_:)``.
    @inlinable
    public var identityKeysAreExact: Bool { false }

    /// Reads the rows and calls ``identitiesEqual(_:_:)``.
    @inlinable
    public func _identitiesEqual(at lhs: UnsafePointer<Row>, _ rhs: UnsafePointer<Row>) -> Bool {
        identitiesEqual(lhs.pointee, rhs.pointee)
    }

    /// Reads the rows and calls ``contentsEqual(_:_:)``.
    @inlinable
    public func _contentsEqual(at lhs: UnsafePointer<Row>, _ rhs: UnsafePointer<Row>) -> Bool {
        contentsEqual(lhs.pointee, rhs.pointee)
    }

    /// Calls ``identityKey(of:)`` for each row.
    @inlinable
    public func writeIdentityKeys(of rows: UnsafeBufferPointer<Row>, to keys: UnsafeMutableBufferPointer<UInt64>) {
        precondition(rows.count == keys.count, "one key a row")
        for index in rows.indices {
            keys[index] = identityKey(of: rows[index])
        }
    }

    /// Calls ``contentHash(of:)`` for each row.
    @inlinable
    public func writeContentHashes(of rows: UnsafeBufferPointer<Row>, to hashes: UnsafeMutableBufferPointer<UInt64>) {
        precondition(rows.count == hashes.count, "one hash a row")
        for index in rows.indices {
            hashes[index] = contentHash(of: rows[index])
        }
    }

    /// The whole row, described.
    public func identityDescription(of row: Row) -> String {
        String(describing: row)
    }

    /// None by default: returns false, and the engine verifies colliding keys instead.
    @inlinable
    public func writeSeededIdentityKeys(of rows: UnsafeBufferPointer<Row>, to keys: UnsafeMutableBufferPointer<UInt64>) -> Bool {
        false
    }
}

/// Writes a per-process secret key of each row's `identity` (the built-in adapters' seeded
/// identity keys): XXH3 with a secret seed over the bytes of strings and byte arrays, Swift's
/// seeded `Hasher` for any other type.
@inlinable
internal func _writeSeededKeys<Row, Identity: Hashable>(
    _ rows: UnsafeBufferPointer<Row>, _ keys: UnsafeMutableBufferPointer<UInt64>, _ identity: (Row) -> Identity
) -> Bool {
    precondition(rows.count == keys.count, "one key a row")
    for index in rows.indices { keys[index] = _seededKey(identity(rows[index])) }
    return true
}

@inlinable
internal func _seededKey<Identity: Hashable>(_ value: Identity) -> UInt64 {
    if let bytes = value as? [UInt8] { return bytes.withUnsafeBytes { _secretHash($0) } }
    if var text = value as? String { return text.withUTF8 { _secretHash(UnsafeRawBufferPointer($0)) } }
    return UInt64(bitPattern: Int64(value.hashValue))
}
