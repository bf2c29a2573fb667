import DiffEngine
import DiffEngineTestSupport
import Dispatch
import Foundation
import Testing

// Every Swift block of the README and of the documentation's articles is copied from this
// file, where it compiles and runs with the context it needs; `everyDocumentedBlockIsHere`
// fails when a block is not found here line for line (leading whitespace aside), so an
// example cannot drift from code that works. Package manifests are type-checked by
// scripts/check-compile.sh instead.

/// A stand-in for `UITableView` with the calls the examples make: it collects one batch
/// and applies it the way UIKit does (`simulateBatch`), checking the result against what
/// the data source shows afterwards.
final class TableViewStub<Row> {
    enum RowAnimation { case fade, none }

    private var batch = BatchUpdate()
    private var shown: [Row]
    private let dataSource: () -> [Row]
    private let sameIdentity: (Row, Row) -> Bool, sameContent: (Row, Row) -> Bool
    private(set) var problems: [String] = []
    private(set) var batches = 0

    init(showing rows: [Row], dataSource: @escaping () -> [Row],
         sameIdentity: @escaping (Row, Row) -> Bool, sameContent: @escaping (Row, Row) -> Bool) {
        shown = rows
        self.dataSource = dataSource
        self.sameIdentity = sameIdentity
        self.sameContent = sameContent
    }

    func performBatchUpdates(_ updates: () -> Void) {
        batch = BatchUpdate()
        updates()
        let after = dataSource()
        problems += simulateBatch(batch, from: [SectionData(header: 0, items: shown)], to: [SectionData(header: 0, items: after)],
                                  sameSection: ==, sameHeaderContent: ==, sameItem: sameIdentity, sameItemContent: sameContent)
        shown = after
        batches += 1
    }

    func deleteRows(at paths: [IndexPath], with animation: RowAnimation) { batch.deletes += paths }
    func insertRows(at paths: [IndexPath], with animation: RowAnimation) { batch.inserts += paths }
    func reloadRows(at paths: [IndexPath], with animation: RowAnimation) { batch.reloads += paths }
    func moveRow(at from: IndexPath, to: IndexPath) { batch.moves.append(BatchMove(from: from, to: to)) }
}

struct Car: Identifiable, Equatable, Sendable {
    var id: Int
    var color: String
    var mileage: Int
}

@Suite struct DocumentationSnippetTests {
    @Test func values() throws {
        // snippet
        // Values whose identity is the whole value (strings, numbers, UUIDs, byte arrays):
        let lines = try diff(["a", "b", "c"], ["b", "c", "d"])
        // lines.deletions == [0], lines.insertions == [2]
        // end snippet
        #expect(lines.deletions == [0] && lines.insertions == [2])
    }

    @Test func identifiableRowsOptionsAndFlatKeys() throws {
        // snippet
        struct Todo: Identifiable, Hashable { var id: Int; var title: String; var done: Bool }
        let oldTodos = [Todo(id: 1, title: "Milk", done: false), Todo(id: 2, title: "Eggs", done: false)]
        let newTodos = [Todo(id: 2, title: "Eggs", done: true), Todo(id: 3, title: "Bread", done: false)]
        let changes = try diff(oldTodos, newTodos)
        // changes.deletions == [0], changes.insertions == [1], changes.updates == [IndexPair(old: 1, new: 0)]
        // end snippet
        #expect(changes == Changeset(oldCount: 2, newCount: 2, deletions: [0], insertions: [1], updates: [IndexPair(old: 1, new: 0)]))

        // snippet
        for update in changes.updates { print("row \(update.old) is row \(update.new) now, changed") }
        // end snippet

        // snippet
        let igListKitStyle = try diff(oldTodos, newTodos, options: DiffOptions(moves: .displaced, duplicates: .firstWins))
        // end snippet
        #expect(igListKitStyle.droppedOld == [] && igListKitStyle.deletions == [0])

        // snippet
        // The standard library's form: oldTodos.applying(difference) == newTodos.
        let difference = changes.collectionDifference(from: oldTodos, to: newTodos)
        // end snippet
        #expect(oldTodos.applying(difference) == newTodos)

        // snippet
        // Precomputed 64-bit keys (and optionally content hashes): the flat-buffer path.
        let flat = diff(oldKeys: [1, 2, 3], newKeys: [2, 3, 4])
        // flat.deletions == [0], flat.insertions == [2]
        // end snippet
        #expect(flat.deletions == [0] && flat.insertions == [2])
    }

    @Test func keyPaths() throws {
        // snippet
        struct Product { var sku: String; var title: String; var price: Double; var stock: Int }
        let before = [Product(sku: "a1", title: "Apple", price: 1.0, stock: 5)]
        let after = [Product(sku: "a1", title: "Apple", price: 1.2, stock: 4)]
        let products = try diff(before, after, identity: \Product.sku, content: \.title, \.price)
        // products.updates == [IndexPair(old: 0, new: 0)]: the price changed; stock is not compared
        // end snippet
        #expect(products.updates == [IndexPair(old: 0, new: 0)])
    }

    @Test func pluginAdapter() throws {
        // snippet
        struct CaseInsensitiveNames: RowAdapter {
            func identityKey(of row: String) -> UInt64 { row.lowercased().stableHash }
            func identitiesEqual(_ a: String, _ b: String) -> Bool { a.lowercased() == b.lowercased() }
            func contentsEqual(_ a: String, _ b: String) -> Bool { a == b }   // a case change is an update
            func contentHash(of row: String) -> UInt64 { row.stableHash }
        }
        let changes = try diff(["Ann", "bob"], ["ann", "Bob", "cy"], using: CaseInsensitiveNames())
        // changes.updates == [IndexPair(old: 0, new: 0), IndexPair(old: 1, new: 1)], insertions == [2]
        // end snippet
        #expect(changes == Changeset(oldCount: 2, newCount: 3, insertions: [2], updates: [IndexPair(old: 0, new: 0), IndexPair(old: 1, new: 1)]))
    }

    @Test func jsonDocuments() throws {
        // snippet
        let before = [#"{"_id": 1, "name": "Ann"}"#, #"{"_id": 2, "name": "Bob"}"#]
        let after = [#"{"name": "Ann", "_id": 1.0}"#, #"{"_id": 2, "name": "Rob"}"#]
        var documents = JSONDocuments(keys: ["_id"])
        let old = try before.map { try documents.append(json: $0) }
        let new = try after.map { try documents.append(json: $0) }
        let changes = try diff(old, new, using: documents.adapter)
        // changes.updates == [IndexPair(old: 1, new: 1)]: member order and 1 vs 1.0 do not matter
        // end snippet
        #expect(changes == Changeset(oldCount: 2, newCount: 2, updates: [IndexPair(old: 1, new: 1)]))
    }

    @Test func batchUpdatesAndJSON() throws {
        let old = (0..<20).map { TestRow(id: $0, content: 0) }
        var new = old.filter { $0.id % 5 != 0 }
        new.swapAt(1, 9)
        new[3].content = 1
        new.append(TestRow(id: 99, content: 0))
        var rows = old // the data source
        let tableView = TableViewStub(showing: old, dataSource: { rows }, sameIdentity: { $0.id == $1.id }, sameContent: ==)
        let changes = try diff(old, new)
        rows = new
        // snippet
        // One performBatchUpdates, valid under UIKit's rules (after the data source has the new rows):
        let batch = BatchUpdateRenderer(section: 0).render(changes)
        assert(BatchUpdateValidator.validate(batch, oldCount: old.count, newCount: new.count).isEmpty)
        tableView.performBatchUpdates {
            tableView.deleteRows(at: batch.deletes, with: .fade)
            tableView.insertRows(at: batch.inserts, with: .fade)
            tableView.reloadRows(at: batch.reloads, with: .none)
            for move in batch.moves { tableView.moveRow(at: move.from, to: move.to) }
        }
        // end snippet
        #expect(tableView.batches == 1 && tableView.problems.isEmpty, "\(tableView.problems)")

        // snippet
        // For a service: the changeset as one line of JSON.
        let json = JSONChangesetRenderer().render(changes)
        // end snippet
        #expect(try JSONDecoder().decode(Changeset.self, from: Data(json)) == changes)
    }

    @Test func sections() throws {
        struct Header: Identifiable, Equatable { var id: String }
        struct Item: Identifiable, Equatable { var id: Int; var text: String }
        let oldSections = [SectionData(header: Header(id: "a"), items: [Item(id: 1, text: "x"), Item(id: 2, text: "y")]),
                           SectionData(header: Header(id: "b"), items: [Item(id: 3, text: "z")])]
        let newSections = [SectionData(header: Header(id: "b"), items: [Item(id: 3, text: "z"), Item(id: 1, text: "x")]),
                           SectionData(header: Header(id: "c"), items: [])]
        // snippet
        // Two levels: sections and items, items matched across sections, delivered in stages:
        let staged = try stagedDiff(oldSections, newSections,
                                    headers: IdentifiableAdapter<Header>(), items: IdentifiableAdapter<Item>())
        // each of staged.stages: a BatchUpdate for one performBatchUpdates, and the sections
        // the data source shows while it is applied
        // end snippet
        #expect(checkStages(staged, old: oldSections, new: newSections).isEmpty)
    }

    @Test func differ() {
        let snapshot1 = [Car(id: 1, color: "blue", mileage: 10), Car(id: 2, color: "blue", mileage: 5)]
        let snapshot2 = [Car(id: 2, color: "blue", mileage: 7), Car(id: 3, color: "blue", mileage: 0)]
        // snippet
        // Keeps the previous snapshot (shared with your array) and compares rows with ==:
        let differ = Differ(keepingPreviousSnapshotOf: IdentifiableAdapter<Car>())
        let first = differ.diff(snapshot1)     // first.isInitial: every row inserted
        let next = differ.diff(snapshot2)      // next.changeset, next.deletedIdentities
        // No rows kept, 16 bytes a row (plus the carried key set), for adapters whose content hash covers every compared field:
        let lean = Differ(keepingOnlyHashesOf: KeyPathAdapter(identity: \Car.id, content: \.mileage))
        // end snippet
        #expect(first.isInitial && !next.isInitial && next.deletedIdentities == [1])
        #expect(next.changeset == Changeset(oldCount: 2, newCount: 2, deletions: [0], insertions: [1], updates: [IndexPair(old: 1, new: 0)]))
        _ = lean.diff(snapshot1)
        #expect(lean.diff(snapshot2).changeset == next.changeset)
    }

    @Test func liveCollection() async {
        let blueCars = (0..<120).map { Car(id: $0, color: "blue", mileage: $0) }
        let seen = EventCounter()
        // snippet
        // A live collection: producers push snapshots; observers get the changes.
        let cars = LiveCollection(adapter: IdentifiableAdapter<Car>(), pageSize: 50)
        let token = cars.observe { event in            // on a private serial queue; observeOnMain for UI code
            print(event.isInitial, event.changeset, event.status as Any)
        }
        cars.update(blueCars, status: LiveStatus(data: .fresh, loading: .loaded))
        cars.nextPage()   // 50 more rows at the end. Bursts are coalesced: an observer still busy
                          // with an event gets one event from there to the newest snapshot.
        // end snippet
        let check = cars.observe { seen.record($0.snapshot.count) }
        waitUntil("an observer to see two pages") { seen.last == 100 }
        check.invalidate()
        // snippet
        token.invalidate()                              // or release the token
        // end snippet
        #expect(seen.count == 1) // registered after both changes: one initial event of 100 rows
        // snippet
        // The same events as an AsyncSequence; ending the loop ends the observation.
        for await event in cars.events() {
            print(event.isInitial, event.snapshot.count)
            if event.snapshot.count == 100 { break }
        }
        // end snippet
    }

    @Test func liveFeed() async {
        let blueCars = (0..<20).map { Car(id: $0, color: "blue", mileage: $0) }
        let sent = EventCounter()
        func send(_ message: [UInt8]) { sent.record(message.count) }
        // snippet
        // One observation for many clients: each new state is diffed once and rendered once.
        let feed = LiveFeed<IdentifiableAdapter<Car>, [UInt8]>(adapter: IdentifiableAdapter())
        feed.publish(blueCars) { update in JSONChangesetRenderer().render(update.changeset) }
        let client = Task {                              // one a client, e.g. for its WebSocket
            for await event in feed.subscribe() {
                send(event.isPublicationsOwn ? event.publication.payload     // the shared event
                     : JSONChangesetRenderer().render(event.changeset))     // it fell behind
            }
        }
        // end snippet
        // Waits without holding a thread, so the client's task can run.
        for _ in 0..<60_000 where sent.count == 0 { try? await Task.sleep(for: .milliseconds(1)) }
        feed.finish()
        await client.value
        #expect(sent.count == 1 && sent.last == JSONChangesetRenderer().render(feed.latest!.changeset).count)
    }

    /// The README and the articles quote only code that is in this file.
    @Test func everyDocumentedBlockIsHere() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let catalog = root.appendingPathComponent("Sources/DiffEngine/DiffEngine.docc")
        let articles = try FileManager.default.contentsOfDirectory(atPath: catalog.path).filter { $0.hasSuffix(".md") }.sorted()
        let documents = [root.appendingPathComponent("README.md")] + articles.map { catalog.appendingPathComponent($0) }
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let snippets = Self.snippetRegions(source)
        var checked = 0
        for document in documents {
            let text = try String(contentsOf: document, encoding: .utf8)
            for block in Self.swiftBlocks(text) where !block.contains("import PackageDescription") {
                let lines = block.split(separator: "\n", omittingEmptySubsequences: false)
                    .map { $0.trimmingCharacters(in: .whitespaces) }
                    .filter { !$0.isEmpty && $0 != "import DiffEngine" }
                guard !lines.isEmpty else { continue }
                checked += 1
                let found = snippets.contains { region in
                    region.count >= lines.count && (0...(region.count - lines.count)).contains { Array(region[$0..<$0 + lines.count]) == lines }
                }
                #expect(found, "\(document.lastPathComponent): a Swift block not in DocumentationSnippetTests:\n\(block)")
            }
        }
        #expect(checked >= 10)
    }

    /// The lines between `// snippet` and `// end snippet`, trimmed, empty lines dropped.
    static func snippetRegions(_ source: String) -> [[String]] {
        var regions: [[String]] = [], current: [String]?
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed == "// snippet" { current = [] } else if trimmed == "// end snippet" {
                if let current { regions.append(current) }
                current = nil
            } else if !trimmed.isEmpty { current?.append(trimmed) }
        }
        return regions
    }

    /// The contents of every ```swift fence.
    static func swiftBlocks(_ markdown: String) -> [String] {
        var blocks: [String] = [], current: [String]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line.trimmingCharacters(in: .whitespaces) == "```swift" { current = [] } else if current != nil, line.trimmingCharacters(in: .whitespaces) == "```" {
                blocks.append(current!.joined(separator: "\n"))
                current = nil
            } else { current?.append(String(line)) }
        }
        return blocks
    }
}

