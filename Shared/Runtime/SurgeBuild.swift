/// What was built: the version the public API and `surge_build_info` state (the commit comes from `SURGE_COMMIT`).
public enum SurgeBuild {
    public static let version = "1.0.0"
}
