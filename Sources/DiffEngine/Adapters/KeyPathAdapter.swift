/// Reads rows through key paths: one for the identity (`\.id`) and any number for the
/// content (`\.title, \.price`). Rows pair by identity; a paired row is updated when any
/// content field differs.
///
/// ```swift
/// let adapter = KeyPathAdapter(identity: \Product.id, content: \.title, \.price)
/// let changes = try diff(oldProducts, newProducts, using: adapter)
/// ```
///
/// - Note: Content hashes fold the fields' hashes with `combineStableHashes`; a field
///   type that is `StableHashable` contributes its stable hash, any other its per-process
///   `hashValue`.
/// - Complexity: Key-path reads cost more than direct property reads; for the last
///   nanoseconds write a small adapter of your own.
public struct KeyPathAdapter<Row, ID: Hashable, each Content: Hashable>: RowAdapter {
    /// The key path of the identity.
    public let identity: KeyPath<Row, ID>
    /// The key paths of the content fields.
    public let content: (repeat KeyPath<Row, each Content>)

    @usableFromInline
    let keyFunction: _KeyFunction<ID>

    /// An adapter keyed by the identity's per-process `hashValue`.
    /// - Parameters:
    ///   - identity: the key path of each row's identity.
    ///   - content: the key paths of the fields compared for updates.
    public init(identity: KeyPath<Row, ID>, content: repeat KeyPath<Row, each Content>) {
        self.identity = identity
        self.content = (repeat each content)
        keyFunction = .perProcess
    }

    @inlinable
    public var identityKeysAreExact: Bool { keyFunction.isExact }

    @inlinable
    public func identityKey(of row: Row) -> UInt64 { keyFunction.key(row[keyPath: identity]) }

    @inlinable
    public func identitiesEqual(_ lhs: Row, _ rhs: Row) -> Bool {
        lhs[keyPath: identity] == rhs[keyPath: identity]
    }

    @inlinable
    public func contentsEqual(_ lhs: Row, _ rhs: Row) -> Bool {
        for path in repeat each content {
            if lhs[keyPath: path] != rhs[keyPath: path] { return false }
        }
        return true
    }

    public func contentHash(of row: Row) -> UInt64 {
        var folded: UInt64?
        for path in repeat each content {
            let value = row[keyPath: path]
            let fieldHash = (value as? any StableHashable)?.stableHash
                ?? UInt64(bitPattern: Int64(value.hashValue))
            folded = folded.map { combineStableHashes($0, fieldHash) } ?? fieldHash
        }
        return folded ?? 0
    }

    public func identityDescription(of row: Row) -> String { String(describing: row[keyPath: identity]) }
}

extension KeyPathAdapter where ID: StableHashable {
    /// An adapter keyed by the identity's stable hash (exact for integer ids).
    /// - Parameters:
    ///   - identity: the key path of each row's identity.
    ///   - content: the key paths of the fields compared for updates.
    public init(identity: KeyPath<Row, ID>, content: repeat KeyPath<Row, each Content>) {
        self.identity = identity
        self.content = (repeat each content)
        keyFunction = .stable
    }
}
