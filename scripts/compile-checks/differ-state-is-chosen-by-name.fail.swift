// must fail with: no exact matches in call to initializer
// What a Differ keeps between calls is chosen by name; the old `Differ(adapter:)`, which
// compiled here and trapped on the first diff, is gone.
import DiffEngine

struct Car: Identifiable, Equatable { var id: Int; var color: String; var mileage: Int }
let differ = Differ(adapter: IdentifiableAdapter<Car>())
