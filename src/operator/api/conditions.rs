//! The condition types and reasons the operator writes, as the contract
//! names them: one list, so a reason is never misspelt in one place.

macro_rules! names {
    ($(#[$doc:meta])* $name:ident { $($variant:ident),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $($variant),*
        }

        impl $name {
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => stringify!($variant)),*
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

names! {
    /// The `type` of a condition.
    ConditionType {
        Ready,
        CapabilitiesReady,
        Licensed,
        Progressing,
        // Capabilities: the admin's spec.
        Configured,
        Suspended,
        Drifted,
        // `--image-pull-secret`: the copies where this needs them.
        ImagePullSecrets,
    }
}

names! {
    /// The `reason` of a condition, and of the Event that reports the same.
    Reason {
        // Resources.
        Ready,
        Waiting,
        Provisioning,
        InvalidSpec,
        Rejected,
        Deleting,
        NotOurs,
        ReleaseFailed,
        // Licensing.
        Licensed,
        LicenseSkipped,
        InstanceLimitExceeded,
        // Capabilities.
        NotInstalled,
        NotReady,
        Failed,
        UpToDate,
        Adopted,
        Installing,
        Upgrading,
        Recovering,
        WaitingForPrerequisites,
        Uninstalling,
        UninstallHeld,
        // Day-2: the admin's spec, pause, drift.
        CatalogValues,
        Configured,
        Refused,
        Suspended,
        Resumed,
        NoDrift,
        DriftDetected,
        DriftCorrected,
        // Image pull secrets.
        Copied,
        PullSecretMissing,
        PullSecretInvalid,
    }
}
