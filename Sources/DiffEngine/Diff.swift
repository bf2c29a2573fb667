// One-call diffs for the common row types. Each picks the adapter that fits; where a type
// fits several (an `Identifiable` type that is also `Hashable`), the identity is `id`.
// Whether keys are stable (and exact, for integers) follows from the key type at run time,
// once, not from the overload: see `_KeyFunction.automatic`.

/// Diffs values whose identity is the whole value (an element pairs with an equal one).
///
/// Keys are stable hashes for `StableHashable` values (the value itself for integers; text
/// lines are this case) and Swift's per-process `hashValue`, verified with `==`, otherwise.
/// - Parameters:
///   - old: the values before.
///   - new: the values after.
///   - options: the move mode and the duplicates policy.
/// - Returns: deletions, insertions and moves; never updates, since equal values are the same.
/// - Throws: `DuplicateIdentityError` only under `DuplicatePolicy.reject`.
/// - Complexity: O(m + n) expected, plus O(k log k) for `minimal` moves of k paired rows.
@inlinable
public func diff<Element: Hashable>(
    _ old: [Element], _ new: [Element], options: DiffOptions = DiffOptions()
) throws(DuplicateIdentityError) -> Changeset {
    try diff(old, new, using: HashableAdapter<Element>(), options: options)
}

/// Diffs `Identifiable` rows: identity is `id`, content the whole row compared with `==`.
///
/// Identity keys are stable hashes for `StableHashable` ids (the id itself for integers)
/// and the ids' per-process `hashValue`, verified with `==`, otherwise.
/// - Parameters:
///   - old: the rows before.
///   - new: the rows after.
///   - options: the move mode and the duplicates policy.
/// - Returns: the changeset, updates included.
/// - Throws: `DuplicateIdentityError` only under `DuplicatePolicy.reject`.
/// - Complexity: O(m + n) expected, plus O(k log k) for `minimal` moves of k paired rows.
@inlinable
public func diff<Element: Identifiable & Equatable>(
    _ old: [Element], _ new: [Element], options: DiffOptions = DiffOptions()
) throws(DuplicateIdentityError) -> Changeset {
    try diff(old, new, using: IdentifiableAdapter<Element>(), options: options)
}

/// Diffs `Identifiable & Hashable` rows by `id` (not by whole value), content compared with `==`.
/// - Parameters:
///   - old: the rows before.
///   - new: the rows after.
///   - options: the move mode and the duplicates policy.
/// - Returns: the changeset, updates included.
/// - Throws: `DuplicateIdentityError` only under `DuplicatePolicy.reject`.
/// - Complexity: O(m + n) expected, plus O(k log k) for `minimal` moves of k paired rows.
@inlinable
public func diff<Element: Identifiable & Hashable>(
    _ old: [Element], _ new: [Element], options: DiffOptions = DiffOptions()
) throws(DuplicateIdentityError) -> Changeset {
    try diff(old, new, using: IdentifiableAdapter<Element>(), options: options)
}

/// Diffs rows through key paths: identity `\.id`, content any number of fields.
///
/// ```swift
/// let changes = try diff(old, new, identity: \.id, content: \.title, \.price)
/// ```
/// - Parameters:
///   - old: the rows before.
///   - new: the rows after.
///   - identity: the key path of each row's identity (stable keys for `StableHashable` ids).
///   - content: the key paths of the fields compared for updates.
///   - options: the move mode and the duplicates policy.
/// - Returns: the changeset, updates included.
/// - Throws: `DuplicateIdentityError` only under `DuplicatePolicy.reject`.
/// - Complexity: O(m + n) expected, plus O(k log k) for `minimal` moves of k paired rows.
@inlinable
public func diff<Row, ID: Hashable, each Content: Hashable>(
    _ old: [Row], _ new: [Row], identity: KeyPath<Row, ID>, content: repeat KeyPath<Row, each Content>,
    options: DiffOptions = DiffOptions()
) throws(DuplicateIdentityError) -> Changeset {
    try diff(old, new, using: KeyPathAdapter(identity: identity, content: repeat each content), options: options)
}
