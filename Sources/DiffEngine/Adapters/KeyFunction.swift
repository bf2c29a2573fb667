#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The stable hash of the most common key types without going through a stored closure:
/// once specialized for a concrete `Value`, each cast below folds to true or false, so an
/// `Int` id costs one move. Nil for other types.
@inlinable
@inline(__always)
internal func _directStableHash<Value>(_ value: Value) -> UInt64? {
    if let value = value as? Int { return value.stableHash }
    if let value = value as? Int64 { return value.stableHash }
    if let value = value as? UInt64 { return value.stableHash }
    if let value = value as? Int32 { return value.stableHash }
    if let value = value as? String { return value.stableHash }
    if let value = value as? UUID { return value.stableHash }
    return nil
}

/// The best 64-bit key the engine can get for an identity value: its stable hash when the
/// type is `StableHashable`, else Swift's per-process `hashValue` (fine for one diff, not
/// for persisted state).
@usableFromInline
internal struct _KeyFunction<Value: Hashable> {
    @usableFromInline let key: (Value) -> UInt64
    @usableFromInline let isExact: Bool
    @usableFromInline let isStable: Bool

    @inlinable
    init(_ key: @escaping (Value) -> UInt64, isExact: Bool, isStable: Bool = false) {
        self.key = key
        self.isExact = isExact
        self.isStable = isStable
    }

    /// The key of `value`.
    @inlinable
    @inline(__always)
    func callAsFunction(_ value: Value) -> UInt64 {
        if isStable, let direct = _directStableHash(value) { return direct }
        return key(value)
    }

    @inlinable
    static var perProcess: _KeyFunction {
        _KeyFunction({ UInt64(bitPattern: Int64($0.hashValue)) }, isExact: false)
    }

    /// The stable hash when `Value` is `StableHashable` (exact for integers), else the
    /// per-process `hashValue`. One dynamic check, made once; specialized for a concrete
    /// `Value`, it folds away. So a generic caller (`func f<T: Identifiable & Hashable>`)
    /// gets stable, exact keys for `Int` ids as a concrete one does.
    @inlinable
    static var automatic: _KeyFunction {
        if let stable = Value.self as? any StableHashable.Type { return stableKeys(stable) }
        return .perProcess
    }

    /// `Value` is `Stable` here: the cast is between one type's two names.
    @inlinable
    static func stableKeys<Stable: StableHashable>(_: Stable.Type) -> _KeyFunction {
        _KeyFunction({ unsafeBitCast($0, to: Stable.self).stableHash }, isExact: Stable.stableHashIsExact, isStable: true)
    }
}
