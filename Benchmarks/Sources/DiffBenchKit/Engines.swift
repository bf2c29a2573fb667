import DiffEngine
import DiffEngineTestSupport
import Foundation

/// The engines, by the names `--engines` takes and the tables print.
enum EngineName: String, CaseIterable, Codable, Sendable {
    case engine, engineDisplaced = "engine-displaced", engineNone = "engine-none", keypath, flat, staged
    case collectionDifference = "collectiondifference", reference
    case differKeypath = "differ-keypath", differIdentifiable = "differ-identifiable"
    case differKeypathHashes = "differ-keypath-hashes", oneshotIdentifiable = "oneshot-identifiable"
    case oneshotKeypath = "oneshot-keypath"
    case engineParallel = "engine-parallel", keypathParallel = "keypath-parallel"
}

/// What an engine answers: a flat changeset, or staged sections.
enum EngineAnswer {
    case changeset(Changeset)
    case staged(StagedChangeset<Row, Row>)
}

/// One engine on one scenario: how to run it and what its answer is held to.
struct EngineCase {
    var name: EngineName
    /// The move mode its answer must satisfy in full (DiffEngine.docc/Correctness.md); nil for peers,
    /// whose answers must apply correctly but may pair rows their own way.
    var mode: MoveMode?
    /// Why it is not run here, if it is not.
    var skipReason: String?
    var run: () -> EngineAnswer
    /// Checks staged answers (flat changesets go to the scenario's verifier).
    var verifyStaged: ((StagedChangeset<Row, Row>) -> [String])?

    init(name: EngineName, mode: MoveMode?, skipReason: String? = nil, run: @escaping () -> Changeset) {
        self.name = name
        self.mode = mode
        self.skipReason = skipReason
        self.run = { .changeset(run()) }
    }

    init(name: EngineName, staged run: @escaping () -> StagedChangeset<Row, Row>,
         verify: @escaping (StagedChangeset<Row, Row>) -> [String]) {
        self.name = name
        self.run = { .staged(run()) }
        verifyStaged = verify
    }

    func check(_ answer: EngineAnswer, with verifier: Verifier) -> [String] {
        switch answer {
        case .changeset(let changeset): verifier.check(changeset, mode)
        case .staged(let staged): verifyStaged?(staged) ?? ["a staged answer with no check"]
        }
    }
}

/// `DiffOptions(parallelism: 2)`, where it takes effect (a side of a million rows or more).
func parallelCases(_ old: [Row], _ new: [Row]) -> [EngineCase] {
    guard Swift.max(old.count, new.count) >= DiffOptions.parallelRowThreshold else { return [] }
    let options = DiffOptions(parallelism: 2)
    return [
        EngineCase(name: .engineParallel, mode: .minimal) { try! diff(old, new, options: options) },
        EngineCase(name: .keypathParallel, mode: .minimal) {
            try! diff(old, new, using: KeyPathAdapter(identity: \.id, content: \.value), options: options)
        },
    ]
}

/// Engine names, for `--engines` and the README.
let engineNames = EngineName.allCases.map(\.rawValue)

/// The peers are skipped when their cost estimate passes these budgets.
let collectionDifferenceBudget = 300_000_000 // (m + n) · D, Myers' O((m + n) D)
let referenceBudget = 30_000_000             // m · n, the naive reference's pairing

struct Verifier {
    let check: (Changeset, MoveMode?) -> [String]
}

/// The changeset `CollectionDifference` gives a user who diffs by identity, infers moves
/// and then compares the contents of the rows that stayed paired (the update pass).
func collectionDifferenceChangeset<Element: Hashable>(
    _ old: [Element], _ new: [Element], sameIdentity: (Element, Element) -> Bool,
    sameContent: (Element, Element) -> Bool
) -> Changeset {
    let difference = new.difference(from: old, by: sameIdentity).inferringMoves()
    var removed = [Bool](repeating: false, count: old.count)
    var inserted = [Bool](repeating: false, count: new.count)
    var deletions: [Int] = [], insertions: [Int] = [], moves: [IndexPair] = []
    for change in difference {
        switch change {
        case let .remove(offset, _, associatedWith):
            removed[offset] = true
            if let destination = associatedWith {
                moves.append(IndexPair(old: offset, new: destination))
            } else {
                deletions.append(offset)
            }
        case let .insert(offset, _, associatedWith):
            inserted[offset] = true
            if associatedWith == nil { insertions.append(offset) }
        }
    }
    var updates: [IndexPair] = []
    var oldIndex = 0
    for newIndex in new.indices where !inserted[newIndex] {
        while removed[oldIndex] { oldIndex += 1 }
        if !sameContent(old[oldIndex], new[newIndex]) { updates.append(IndexPair(old: oldIndex, new: newIndex)) }
        oldIndex += 1
    }
    moves.sort { $0.new < $1.new }
    return Changeset(oldCount: old.count, newCount: new.count, deletions: deletions.sorted(),
                     insertions: insertions.sorted(), updates: updates, moves: moves)
}

/// A verifier against the indexed reference (computed once, on first use).
func makeVerifier<Element, Identity: Hashable>(
    _ old: [Element], _ new: [Element], identity: @escaping (Element) -> Identity,
    sameContent: @escaping (Element, Element) -> Bool
) -> Verifier {
    var reference: ReferenceResult?
    return Verifier { changeset, mode in
        let application = checkApplication(changeset, old: old, new: new,
                                           sameIdentity: { identity($0) == identity($1) }, sameContent: sameContent)
        guard application.problems.isEmpty, let mode else { return application.problems }
        if reference == nil { reference = indexedReferenceDiff(old, new, identity: identity, sameContent: sameContent) }
        return checkPairing(changeset, implied: application.implied, mode: mode, reference: reference!)
    }
}

/// The peers every scenario shares: CollectionDifference and the naive reference.
func peerCases<Element: Hashable>(
    _ old: [Element], _ new: [Element], editDistance: Int,
    sameIdentity: @escaping (Element, Element) -> Bool, sameContent: @escaping (Element, Element) -> Bool
) -> [EngineCase] {
    let rows = old.count + new.count
    let myersCost = rows * Swift.max(editDistance, 1)
    return [
        EngineCase(name: .collectionDifference, mode: nil,
                   skipReason: myersCost > collectionDifferenceBudget
                       ? "Myers O((m+n)·D) ≈ \(myersCost / 1_000_000)M steps, over the \(collectionDifferenceBudget / 1_000_000)M budget" : nil) {
            collectionDifferenceChangeset(old, new, sameIdentity: sameIdentity, sameContent: sameContent)
        },
        EngineCase(name: .reference, mode: .minimal,
                   skipReason: old.count * new.count > referenceBudget
                       ? "naive O(m·n) reference over the \(referenceBudget / 1_000_000)M-step budget" : nil) {
            referenceChangeset(old, new, sameIdentity: sameIdentity, sameContent: sameContent)
        },
    ]
}

/// Every engine for a scenario's workload, and the verifier of their answers.
func engineCases(for workload: Workload, editDistance: Int) -> (cases: [EngineCase], verifier: Verifier) {
    switch workload {
    case let .rows(old, new):
        let oldKeys = old.map { $0.id.stableHash }, newKeys = new.map { $0.id.stableHash }
        let oldContents = old.map { $0.value.stableHash }, newContents = new.map { $0.value.stableHash }
        let cases = [
            EngineCase(name: .engine, mode: .minimal) { try! diff(old, new) },
            EngineCase(name: .engineDisplaced, mode: .displaced) { try! diff(old, new, options: DiffOptions(moves: .displaced)) },
            EngineCase(name: .engineNone, mode: MoveMode.none) { try! diff(old, new, options: DiffOptions(moves: .none)) },
            EngineCase(name: .keypath, mode: .minimal) { try! diff(old, new, identity: \.id, content: \.value) },
            EngineCase(name: .flat, mode: .minimal) {
                diff(oldKeys: oldKeys, newKeys: newKeys, oldContentHashes: oldContents, newContentHashes: newContents)
            },
        ] + parallelCases(old, new) + peerCases(old, new, editDistance: editDistance, sameIdentity: { $0.id == $1.id }, sameContent: ==)
        return (cases, makeVerifier(old, new, identity: \.id, sameContent: ==))
    case let .uuids(old, new):
        let oldKeys = old.map(\.stableHash), newKeys = new.map(\.stableHash)
        let cases = [
            EngineCase(name: .engine, mode: .minimal) { try! diff(old, new) },
            EngineCase(name: .engineDisplaced, mode: .displaced) { try! diff(old, new, options: DiffOptions(moves: .displaced)) },
            EngineCase(name: .flat, mode: .minimal) { diff(oldKeys: oldKeys, newKeys: newKeys) },
        ] + peerCases(old, new, editDistance: editDistance, sameIdentity: ==, sameContent: ==)
        return (cases, makeVerifier(old, new, identity: { $0 }, sameContent: ==))
    case let .records(old, new):
        let cases = [
            EngineCase(name: .engine, mode: .minimal) { try! diff(old, new) },
            EngineCase(name: .keypath, mode: .minimal) { try! diff(old, new, identity: \.id, content: \.title, \.price, \.updatedAt) },
        ] + peerCases(old, new, editDistance: editDistance, sameIdentity: { $0.id == $1.id }, sameContent: ==)
        return (cases, makeVerifier(old, new, identity: \.id, sameContent: ==))
    case let .named(old, new):
        let oldKeys = old.map { $0.id.stableHash }, newKeys = new.map { $0.id.stableHash }
        let oldContents = old.map { $0.value.stableHash }, newContents = new.map { $0.value.stableHash }
        let cases = [
            EngineCase(name: .engine, mode: .minimal) { try! diff(old, new) },
            EngineCase(name: .keypath, mode: .minimal) { try! diff(old, new, identity: \.id, content: \.value) },
            EngineCase(name: .flat, mode: .minimal) {
                diff(oldKeys: oldKeys, newKeys: newKeys, oldContentHashes: oldContents, newContentHashes: newContents)
            },
        ] + peerCases(old, new, editDistance: editDistance, sameIdentity: { $0.id == $1.id }, sameContent: ==)
        return (cases, makeVerifier(old, new, identity: \.id, sameContent: ==))
    case let .sections(old, new):
        let cases = [
            EngineCase(name: .staged, staged: {
                try! stagedDiff(old, new, headers: IdentifiableAdapter<Row>(), items: IdentifiableAdapter<Row>())
            }, verify: { staged in checkStages(staged, old: old, new: new) }),
        ]
        return (cases, Verifier { _, _ in [] })
    case let .bytes(adapter, old, new):
        let oldKeys = old.map(adapter.identityKey(of:)), newKeys = new.map(adapter.identityKey(of:))
        let oldContents = old.map(adapter.contentHash(of:)), newContents = new.map(adapter.contentHash(of:))
        let identity: (ByteRow) -> [UInt8] = { Array(adapter.bytes[$0.identity]) }
        let sameContent: (ByteRow, ByteRow) -> Bool = { adapter.bytes[$0.content].elementsEqual(adapter.bytes[$1.content]) }
        let cases = [
            EngineCase(name: .engine, mode: .minimal) { try! diff(old, new, using: adapter) },
            EngineCase(name: .flat, mode: .minimal) {
                diff(oldKeys: oldKeys, newKeys: newKeys, oldContentHashes: oldContents, newContentHashes: newContents)
            },
            EngineCase(name: .reference, mode: .minimal,
                       skipReason: old.count * new.count > referenceBudget ? "naive O(m·n) reference over budget" : nil) {
                referenceChangeset(old, new, sameIdentity: { identity($0) == identity($1) }, sameContent: sameContent)
            },
        ]
        return (cases, makeVerifier(old, new, identity: identity, sameContent: sameContent))
    }
}
