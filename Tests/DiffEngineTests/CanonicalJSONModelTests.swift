import DiffEngine
import DiffEngineTestSupport
import Testing

/// A JSON value built in the test, written out as text in many ways, with the canonical
/// encoding that every way must give computed from the value itself: members sorted by
/// their key's bytes (of a repeated key the last), integers as significant digits and an
/// exponent, strings as a length and their bytes.
private indirect enum Model {
    case null, bool(Bool), integer(Int), string([UInt8])
    case array([Model])
    case object([(key: [UInt8], value: Model)])

    var canonical: [UInt8] {
        switch self {
        case .null: return Array("n".utf8)
        case .bool(let value): return Array((value ? "t" : "f").utf8)
        case .integer(let value):
            guard value != 0 else { return Array("d0e0;".utf8) }
            var digits = Array(String(value.magnitude).utf8), exponent = 0
            while digits.last == UInt8(ascii: "0") { digits.removeLast(); exponent += 1 }
            return Array("d\(value < 0 ? "-" : "")".utf8) + digits + Array("e\(exponent);".utf8)
        case .string(let bytes):
            return [UInt8(ascii: "s")] + withUnsafeBytes(of: UInt32(bytes.count).littleEndian, Array.init) + bytes
        case .array(let items):
            return [UInt8(ascii: "[")] + items.flatMap(\.canonical) + [UInt8(ascii: "]")]
        case .object(let members):
            var last: [[UInt8]: Int] = [:]
            for (index, member) in members.enumerated() { last[member.key] = index }
            let kept = last.values.sorted { members[$0].key.lexicographicallyPrecedes(members[$1].key) }
            return [UInt8(ascii: "{")] + kept.flatMap { Model.string(members[$0].key).canonical + members[$0].value.canonical }
                + [UInt8(ascii: "}")]
        }
    }

    /// The value as JSON text: whitespace, escapes and number forms drawn from `random`.
    func text(_ random: inout SeededGenerator) -> String {
        let space = ["", " ", "\n", "\t "][Int.random(in: 0..<4, using: &random)]
        switch self {
        case .null: return "null"
        case .bool(let value): return value ? "true" : "false"
        case .integer(let value):
            switch Int.random(in: 0..<3, using: &random) {
            case 0: return String(value)
            case 1: return "\(value).000"
            default: return "\(value)0e-1"
            }
        case .string(let bytes): return Model.quoted(bytes, &random)
        case .array(let items): return "[" + items.map { space + $0.text(&random) }.joined(separator: ",") + space + "]"
        case .object(let members):
            return "{" + members.map { space + Model.quoted($0.key, &random) + space + ":" + $0.value.text(&random) }
                .joined(separator: ",") + space + "}"
        }
    }

    private static func quoted(_ bytes: [UInt8], _ random: inout SeededGenerator) -> String {
        var text = "\""
        for scalar in String(decoding: bytes, as: UTF8.self).unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case _ where scalar.value < 0x20: text += "\\u00" + String(scalar.value, radix: 16).leftPadded(2)
            case _ where scalar.isASCII && Bool.random(using: &random) && Int.random(in: 0..<8, using: &random) == 0:
                text += "\\u" + String(scalar.value, radix: 16).leftPadded(4)
            default: text.unicodeScalars.append(scalar)
            }
        }
        return text + "\""
    }
}

private extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}

@Suite struct CanonicalJSONModelTests {
    /// Keys that share prefixes longer and shorter than eight bytes, an empty one, escapes
    /// and non-ASCII, so that the member sort compares them every way.
    private static let keys: [[UInt8]] = ["id", "name", "email", "a", "ab", "", "abcdefghij", "abcdefghik",
                                           "abcdefgh", "\u{e9}t\u{e9}", "k\"q\\", "zz", "line\nbreak"].map { Array($0.utf8) }

    private static func value(_ random: inout SeededGenerator, depth: Int) -> Model {
        switch Int.random(in: 0..<(depth < 2 ? 7 : 5), using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2: return .integer(Int.random(in: -1_000_000...1_000_000, using: &random) * [1, 10, 1000][Int.random(in: 0..<3, using: &random)])
        case 3, 4:
            let pieces = ["plain", " text ", "\"", "\\", "\n", "\u{1}", "é", "😀", "a long run of plain bytes"]
            return .string(Array((0..<Int.random(in: 0..<5, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined().utf8))
        case 5: return .array((0..<Int.random(in: 0..<4, using: &random)).map { _ in value(&random, depth: depth + 1) })
        default: return object(&random, depth: depth + 1, order: nil)
        }
    }

    /// An object of random members, or with `order`'s keys in that order.
    private static func object(_ random: inout SeededGenerator, depth: Int, order: [[UInt8]]?) -> Model {
        let names = order ?? (0..<Int.random(in: 0..<(Bool.random(using: &random) ? 6 : 24), using: &random))
            .map { _ in keys.randomElement(using: &random)! }
        return .object(names.map { (key: $0, value: value(&random, depth: depth)) })
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func aReusedEncoderGivesEachDocumentsEncoding(seed: UInt64) throws {
        // Rows mostly repeat one member order, as a JSON Lines file does; some reorder,
        // repeat or drop members, or nest objects, which the next row must not inherit.
        var random = SeededGenerator(seed: seed)
        var encoder = CanonicalJSONEncoder()
        var documents = JSONDocuments(keys: ["k"])
        var order = Self.keys.shuffled(using: &random).prefix(6).map { $0 }
        var previous: (row: ByteRow, canonical: [UInt8])?
        for _ in 0..<2_000 {
            switch Int.random(in: 0..<10, using: &random) {
            case 0: order.shuffle(using: &random)
            case 1: order = (0..<Int.random(in: 0..<24, using: &random)).map { _ in Self.keys.randomElement(using: &random)! }
            default: break
            }
            let model = Int.random(in: 0..<8, using: &random) == 0
                ? Self.object(&random, depth: 0, order: nil) : Self.object(&random, depth: 0, order: order)
            var text = model.text(&random)
            let expected = model.canonical
            try text.withUTF8 { try encoder.encode(UnsafeRawBufferPointer($0)) }
            #expect(encoder.encoded == expected, "\(text)")
            #expect(try text.withUTF8 { try canonicalJSON(UnsafeRawBufferPointer($0)) } == expected, "\(text)")
            // As a document, under its key (members out of order at the top level too).
            let row = try documents.append(json: #"{"v":"# + text + #","k":0}"#)
            if let previous {
                #expect(documents.adapter.contentsEqual(previous.row, row) == (previous.canonical == expected), "\(text)")
            }
            previous = (row, expected)
        }
    }
}
