// A store observer in the style of Ditto's "cars" example:
//   SELECT * FROM cars WHERE color = 'blue'
// as a filter over an in-memory store that changes. Each change to the store pushes the
// query's new result into a LiveCollection; the observer prints which car ids were
// inserted, updated, moved and deleted, as they happen.
import DiffEngine
import Dispatch
import Foundation

struct Car: Identifiable, Hashable, Sendable {
    var id: String
    var make: String
    var color: String
    var mileage: Int
}

/// The in-memory store and its live query.
final class CarStore: @unchecked Sendable {
    private var cars: [Car] = []
    let blueCars = LiveCollection(adapter: IdentifiableAdapter<Car>())

    /// `SELECT * FROM cars WHERE color = 'blue'`, in insertion order.
    private func query() -> [Car] { cars.filter { $0.color == "blue" } }

    func upsert(_ car: Car) {
        if let index = cars.firstIndex(where: { $0.id == car.id }) { cars[index] = car } else { cars.append(car) }
        blueCars.update(query(), status: LiveStatus(data: .local, loading: .loaded))
    }

    func remove(id: String) {
        cars.removeAll { $0.id == id }
        blueCars.update(query(), status: LiveStatus(data: .local, loading: .loaded))
    }

    func moveToFront(id: String) {
        guard let index = cars.firstIndex(where: { $0.id == id }) else { return }
        cars.insert(cars.remove(at: index), at: 0)
        blueCars.update(query(), status: LiveStatus(data: .local, loading: .loaded))
    }
}

let store = CarStore()
let printed = DispatchSemaphore(value: 0)
let printing = DispatchQueue(label: "cars-example.printing")

let token = store.blueCars.observe(on: printing) { event in
    let ids = { (indexes: [Int], rows: [Car]) in indexes.map { rows[$0].id } }
    let old = event.isInitial ? [] : previousSnapshot
    var line = event.isInitial ? "initial:" : "changed:"
    line += " blue cars \(event.snapshot.map(\.id))"
    let changes = event.changeset
    if !changes.insertions.isEmpty { line += "\n  inserted \(ids(changes.insertions, event.snapshot))" }
    if !changes.updates.isEmpty { line += "\n  updated  \(changes.updates.map { event.snapshot[$0.new].id })" }
    if !changes.moves.isEmpty { line += "\n  moved    \(changes.moves.map { "\(event.snapshot[$0.new].id) \($0.old)->\($0.new)" })" }
    if !changes.deletions.isEmpty { line += "\n  deleted  \(ids(changes.deletions, old))" }
    print(line)
    previousSnapshot = event.snapshot
    printed.signal()
}
nonisolated(unsafe) var previousSnapshot: [Car] = []

printed.wait() // the initial (empty) result
let steps: [(String, () -> Void)] = [
    ("insert a blue car", { store.upsert(Car(id: "car-1", make: "Volvo", color: "blue", mileage: 1_000)) }),
    ("insert a red one (not in the query)", { store.upsert(Car(id: "car-2", make: "Fiat", color: "red", mileage: 500)) }),
    ("insert another blue one", { store.upsert(Car(id: "car-3", make: "Saab", color: "blue", mileage: 90_000)) }),
    ("paint the red one blue", { store.upsert(Car(id: "car-2", make: "Fiat", color: "blue", mileage: 500)) }),
    ("drive car-1 (update)", { store.upsert(Car(id: "car-1", make: "Volvo", color: "blue", mileage: 1_250)) }),
    ("reorder: car-3 first (move)", { store.moveToFront(id: "car-3") }),
    ("scrap car-2 (delete)", { store.remove(id: "car-2") }),
]
for (title, step) in steps {
    print("-- \(title)")
    step()
    // The red car does not change the query's result: no event comes.
    if title.hasPrefix("insert a red") { continue }
    printed.wait()
}
token.invalidate()
