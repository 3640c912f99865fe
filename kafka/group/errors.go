package group

import "github.com/twmb/franz-go/pkg/kerr"

// Kafka error codes the coordinator answers with (Kafka's group error order).
var (
	errNone              int16 = 0
	errCoordinatorNA           = kerr.CoordinatorNotAvailable.Code
	errUnknownMember           = kerr.UnknownMemberID.Code
	errIllegalGeneration       = kerr.IllegalGeneration.Code
	errRebalancing             = kerr.RebalanceInProgress.Code
	errInconsistentProto       = kerr.InconsistentGroupProtocol.Code
	errInvalidGroupID          = kerr.InvalidGroupID.Code
	errInvalidSession          = kerr.InvalidSessionTimeout.Code
	errMemberIDRequired        = kerr.MemberIDRequired.Code
	errFenced                  = kerr.FencedInstanceID.Code
	errGroupNotFound           = kerr.GroupIDNotFound.Code
	errNonEmptyGroup           = kerr.NonEmptyGroup.Code
	errMetadataTooLarge        = kerr.OffsetMetadataTooLarge.Code
	errUnknownTopic            = kerr.UnknownTopicOrPartition.Code
	errSubscribedToTopic       = kerr.GroupSubscribedToTopic.Code
	errInvalidRequest          = kerr.InvalidRequest.Code
	errUnstableOffset          = kerr.UnstableOffsetCommit.Code
	errGroupFull               = kerr.GroupMaxSizeReached.Code
)

// Errors of the consumer protocol (KIP-848).
var (
	errFencedEpoch         = kerr.FencedMemberEpoch.Code
	errUnreleasedInstance  = kerr.UnreleasedInstanceID.Code
	errUnsupportedAssignor = kerr.UnsupportedAssignor.Code
	errStaleEpoch          = kerr.StaleMemberEpoch.Code
	errInvalidRegex        = kerr.InvalidRegularExpression.Code
)
