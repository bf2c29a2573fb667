/// A document that cannot be used: its JSON does not parse, it is not an object, or it
/// lacks a key member.
public enum JSONDocumentError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The text is not valid JSON.
    case syntax(JSONSyntaxError)
    /// The text is valid JSON but not an object.
    case notAnObject
    /// The object has no member of this name, which is one of the keys.
    case missingKey(String)

    /// What is wrong with the document, in a few words.
    public var description: String {
        switch self {
        case .syntax(let error): "invalid JSON: \(error)"
        case .notAnObject: "expected a JSON object"
        case .missingKey(let key): "no member '\(key)', which is a key"
        }
    }
}

/// JSON documents diffed by key, for services that diff documents by `_id`: identity is
/// the tuple of the key members' values, content the whole document compared by value
/// (member order ignored, numbers by numeric value, `true`/`false` distinct from
/// numbers, strings as exact UTF-8 after unescaping).
///
/// Every document of both sides is added to one collection, which keeps their canonical
/// encodings in one buffer; diff the rows it returns with its `adapter`:
///
/// ```swift
/// var documents = JSONDocuments(keys: ["_id"])
/// let old = try before.map { try documents.append(json: $0) }
/// let new = try after.map { try documents.append(json: $0) }
/// let changes = try diff(old, new, using: documents.adapter)
/// ```
///
/// - Complexity: appending is linear in the document's size, plus sorting each object's
///   members; diffing hashes the key encodings in C and compares with `memcmp`.
public struct JSONDocuments: Sendable {
    /// The top-level member names whose values form each document's identity, in order.
    public let keys: [String]
    private let keyBytes: [[UInt8]]
    /// The canonical encodings of every document appended so far.
    public private(set) var canonicalBytes: [UInt8] = []
    private var scratch = _CanonicalJSONWriter.Scratch()

    /// Creates an empty collection.
    /// - Parameter keys: the top-level member names of the identity (at least one).
    public init(keys: [String]) {
        precondition(!keys.isEmpty, "a JSON document diff needs at least one key member")
        self.keys = keys
        keyBytes = keys.map { Array($0.utf8) }
    }

    /// Reserves room for about `byteCount` bytes of canonical encodings (about the size of
    /// the JSON text to come), so that a large batch does not regrow the buffer.
    public mutating func reserveCapacity(_ byteCount: Int) {
        canonicalBytes.reserveCapacity(byteCount)
    }

    /// Adds one document (the UTF-8 text of a JSON object) and returns its row.
    /// - Throws: `JSONDocumentError` when it does not parse, is not an object or lacks a key.
    public mutating func append(json: UnsafeRawBufferPointer) throws(JSONDocumentError) -> ByteRow {
        if let offset = firstInvalidUTF8Byte(in: json) {
            throw .syntax(JSONSyntaxError(offset: offset, message: "invalid UTF-8"))
        }
        let start = canonicalBytes.count
        do {
            guard try _CanonicalJSONWriter.encodeObject(json, into: &canonicalBytes, &scratch) else {
                // Valid JSON of another kind is "not an object"; anything else a syntax error.
                _ = try canonicalJSON(json)
                throw JSONDocumentError.notAnObject
            }
        } catch let error as JSONSyntaxError {
            canonicalBytes.removeSubrange(start...)
            throw .syntax(error)
        } catch {
            throw .notAnObject
        }
        let content = start..<canonicalBytes.count
        // The identity: the key values' encodings, back to back (they are prefix-free).
        let identityStart = canonicalBytes.count
        for (index, key) in keyBytes.enumerated() {
            guard let member = scratch.members.first(where: { member in
                canonicalBytes[member.keyStart..<member.keyEnd].elementsEqual(key)
            }) else {
                canonicalBytes.removeSubrange(start...)
                throw .missingKey(keys[index])
            }
            // Byte by byte: appending a slice of the array to itself would share, and so
            // copy, the whole buffer on every document.
            for offset in member.keyEnd..<member.end { canonicalBytes.append(canonicalBytes[offset]) }
        }
        return ByteRow(identity: identityStart..<canonicalBytes.count, content: content)
    }

    /// Adds one document given as a string.
    public mutating func append(json: String) throws(JSONDocumentError) -> ByteRow {
        var text = json
        let result = text.withUTF8 { bytes in
            Result { () throws(JSONDocumentError) in try append(json: UnsafeRawBufferPointer(bytes)) }
        }
        return try result.get()
    }

    /// The adapter that reads this collection's rows.
    public var adapter: ByteRowAdapter { ByteRowAdapter(bytes: canonicalBytes) }
}

/// The canonical encoding of one JSON value: the bytes that ``JSONDocuments`` compares and
/// hashes, equal exactly when the values are equal by value (object member order ignored,
/// numbers by numeric value, strings as unescaped UTF-8).
///
/// Its stable hash (``stableHash(bytes:)``) is the document's content hash, the same in every
/// process and on every machine: a service may store it or send it to a client.
/// - Parameter text: one JSON value as UTF-8 (surrounding whitespace allowed).
/// - Returns: the canonical encoding.
/// - Throws: `JSONSyntaxError` when the text is not one JSON value.
/// - Complexity: O(n) in the length of the text, O(m log m) more for an object of m members.
public func canonicalJSON(_ text: UnsafeRawBufferPointer) throws(JSONSyntaxError) -> [UInt8] {
    var out: [UInt8] = []
    try _CanonicalJSONWriter.encodeDocument(text, into: &out)
    return out
}

/// Encodes JSON documents canonically (see ``canonicalJSON(_:)``) one after another, reusing
/// its buffers, so that a stream of documents (a JSON Lines file) allocates nothing per
/// document.
public struct CanonicalJSONEncoder {
    private var scratch = _CanonicalJSONWriter.Scratch()
    /// The last document's canonical encoding.
    public private(set) var encoded: [UInt8] = []

    /// Creates an encoder.
    public init() {}

    /// Replaces ``encoded`` with the canonical encoding of `text` (see `canonicalJSON`).
    /// - Throws: `JSONSyntaxError` when the text is not one JSON value.
    public mutating func encode(_ text: UnsafeRawBufferPointer) throws(JSONSyntaxError) {
        encoded.removeAll(keepingCapacity: true)
        try _CanonicalJSONWriter.encodeDocument(text, into: &encoded, &scratch)
    }
}
