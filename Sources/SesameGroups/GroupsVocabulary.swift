import Foundation
import SesameCore

extension APIErrorCode {
    /// A group slug outside the rule (`GroupSlugs`): capitals, characters outside ASCII, spaces, a leading digit,
    /// more than 64 characters. Refused, never folded into another group's slug.
    package static let invalidGroupSlug = APIErrorCode("invalid_group_slug")
    /// A group's display name that is empty or longer than 64 characters.
    package static let invalidGroupName = APIErrorCode("invalid_group_name")
    /// A group's custom claims that are not a JSON object of at most 4 KiB, or that name a claim the identity
    /// provider gives itself (`sub`, `iss`, `email`, `groups`, …).
    package static let invalidGroupClaims = APIErrorCode("invalid_group_claims")
    /// No group has that slug.
    package static let groupNotFound = APIErrorCode("group_not_found")
    /// A group with that slug exists already.
    package static let groupExists = APIErrorCode("group_exists")
    /// The account named is not a member of the group (removal), or is one already (adding).
    package static let membershipUnchanged = APIErrorCode("membership_unchanged")
    /// No account has that username or id.
    package static let accountNotFound = APIErrorCode("account_not_found")
}

extension AuditKind {
    /// A group was created (detail: its slug).
    package static let groupAdded = AuditKind("group.added")
    /// A group's display name or custom claims changed (detail: its slug).
    package static let groupChanged = AuditKind("group.changed")
    /// A group and its memberships were removed (detail: its slug).
    package static let groupRemoved = AuditKind("group.removed")
    /// An account was put in a group (the event's account; detail: the slug).
    package static let groupMemberAdded = AuditKind("group.member_added")
    /// An account was taken out of a group (the event's account; detail: the slug).
    package static let groupMemberRemoved = AuditKind("group.member_removed")
    /// The first account made by sign-up joined the administrators' group (`firstSignUpAdmin`; detail: the slug).
    package static let firstSignUpAdmin = AuditKind("group.first_admin")
}

extension Vocabulary {
    /// The words `SesameGroups` declares (above); the composition root collects them into `Vocabulary.server`.
    package static let groups = Vocabulary(
        owner: "SesameGroups",
        errorCodes: [
            .invalidGroupSlug, .invalidGroupName, .invalidGroupClaims, .groupNotFound, .groupExists,
            .membershipUnchanged, .accountNotFound,
        ],
        auditKinds: [
            .groupAdded, .groupChanged, .groupRemoved, .groupMemberAdded, .groupMemberRemoved, .firstSignUpAdmin,
        ],
        settings: ServerConfiguration.groupsSettings
    )
}

extension APIFragment {
    /// This part's paths and components of the API document (`Resources/openapi.yaml`; the layout is `APIFragment`'s).
    package static let groups = APIFragment(owner: "SesameGroups", bundle: .module)
}
