import Foundation

/// Units a quantity task or competition can count in: a known list (so clients can offer them and show them
/// consistently) plus custom units of 1-20 characters ("laps", "cups of tea").
public enum Units {
    public static let known: [String] = [
        "litres", "millilitres", "glasses", "cups", "kilometres", "metres", "miles", "steps", "minutes", "hours",
        "pages", "books", "chapters", "push-ups", "sit-ups", "squats", "reps", "sets", "times", "calories",
        "kilograms", "pounds", "servings", "days",
    ]

    public static let maxLength = 20

    /// Common spellings of known units, mapped to the known spelling.
    static let aliases: [String: String] = [
        "l": "litres", "liter": "litres", "liters": "litres", "litre": "litres",
        "ml": "millilitres", "milliliter": "millilitres", "milliliters": "millilitres", "millilitre": "millilitres",
        "glass": "glasses", "cup": "cups",
        "km": "kilometres", "kilometer": "kilometres", "kilometers": "kilometres", "kilometre": "kilometres",
        "m": "metres", "meter": "metres", "meters": "metres", "metre": "metres",
        "mile": "miles", "mi": "miles", "step": "steps",
        "min": "minutes", "mins": "minutes", "minute": "minutes", "h": "hours", "hour": "hours",
        "page": "pages", "book": "books", "chapter": "chapters",
        "pushup": "push-ups", "pushups": "push-ups", "push-up": "push-ups", "push ups": "push-ups",
        "situp": "sit-ups", "situps": "sit-ups", "sit-up": "sit-ups", "squat": "squats",
        "rep": "reps", "set": "sets", "time": "times", "kcal": "calories", "calorie": "calories",
        "kg": "kilograms", "kilogram": "kilograms", "lb": "pounds", "lbs": "pounds", "pound": "pounds",
        "serving": "servings", "day": "days",
    ]

    /// The known spelling of `unit` if it is a known unit or one of its aliases; otherwise the unit as given, trimmed.
    public static func canonical(_ unit: String) -> String {
        let trimmed = unit.trimmingCharacters(in: .whitespacesAndNewlines)
        let lowered = trimmed.lowercased()
        if known.contains(lowered) { return lowered }
        return aliases[lowered] ?? trimmed
    }

    public static func isKnown(_ unit: String) -> Bool { known.contains(canonical(unit)) }

    /// Why `unit` cannot be used, or nil.
    static func problem(with unit: String) -> String? {
        let trimmed = unit.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty { return "must not be empty" }
        if trimmed.count > maxLength { return "must be a known unit or a custom unit of at most \(maxLength) characters" }
        if trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return "must not contain control characters"
        }
        return nil
    }
}
