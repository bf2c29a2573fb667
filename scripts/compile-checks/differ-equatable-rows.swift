// must compile: the Differ's own doc example with rows that are Identifiable & Equatable
// but not Hashable (it keeps the previous snapshot and compares with ==).
import DiffEngine

struct Car: Identifiable, Equatable { var id: Int; var color: String; var mileage: Int }
let differ = Differ(keepingPreviousSnapshotOf: IdentifiableAdapter<Car>())
_ = differ.diff([Car(id: 1, color: "blue", mileage: 10)])
