// must fail with: requires that 'Car' conform to 'Hashable'
// Hash-only state needs a content hash for every row; a non-Hashable model has none, and
// the compiler says so (this used to compile and trap on the first diff).
import DiffEngine

struct Car: Identifiable, Equatable { var id: Int; var color: String; var mileage: Int }
let differ = Differ(keepingOnlyHashesOf: IdentifiableAdapter<Car>())
