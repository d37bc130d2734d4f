// Package contract holds the wire types that cross service boundaries: the rules schema of the
// public API (validated by identity-svc at creation and by context-svc on updates) and the
// internal views of identity-svc.
package contract

import (
	"bytes"
	"encoding/json"
	"regexp"

	"github.com/svcdev/svc/pkg/apierr"
)

// Rules is the mailbox and response policy of an object (spec "Rules"). Every leaf is a string.
type Rules struct {
	Read                 *RulesRead      `json:"read,omitempty" bson:"read,omitempty"`
	Write                *RulesWrite     `json:"write,omitempty" bson:"write,omitempty"`
	Respond              *RulesRespond   `json:"respond,omitempty" bson:"respond,omitempty"`
	ParticipantAdmission *RulesAdmission `json:"participant_admission,omitempty" bson:"participant_admission,omitempty"`
}

// RulesRead is the read section.
type RulesRead struct {
	LLMTxt      string `json:"llm_txt,omitempty" bson:"llm_txt,omitempty"`
	Dumps       string `json:"dumps,omitempty" bson:"dumps,omitempty"`
	MailboxMeta string `json:"mailbox_meta,omitempty" bson:"mailbox_meta,omitempty"`
}

// RulesWrite is the write section.
type RulesWrite struct {
	Mailbox string `json:"mailbox,omitempty" bson:"mailbox,omitempty"`
	LLMTxt  string `json:"llm_txt,omitempty" bson:"llm_txt,omitempty"`
	Dumps   string `json:"dumps,omitempty" bson:"dumps,omitempty"`
}

// RulesRespond is the respond section.
type RulesRespond struct {
	Mode   string `json:"mode,omitempty" bson:"mode,omitempty"`
	Policy string `json:"policy,omitempty" bson:"policy,omitempty"`
}

// RulesAdmission is the participant_admission section.
type RulesAdmission struct {
	Mode string `json:"mode,omitempty" bson:"mode,omitempty"`
}

// Admission is what mailbox-svc needs of an object's rules to take a message: the mode a thread
// opened to the object reports and whether its mailbox admits verified senders only. Its zero
// value is an object without rules.
type Admission struct {
	// Mode is participant_admission.mode, "" when the rules do not set it.
	Mode string `json:"mode"`
	// WriteMailbox is write.mailbox, "" when the rules do not set it.
	WriteMailbox string `json:"write_mailbox"`
}

// Admission returns what the rules say of admission (the zero value for no rules).
func (r *Rules) Admission() Admission {
	var a Admission
	if r == nil {
		return a
	}
	if r.ParticipantAdmission != nil {
		a.Mode = r.ParticipantAdmission.Mode
	}
	if r.Write != nil {
		a.WriteMailbox = r.Write.Mailbox
	}
	return a
}

// Limits of rule leaves: a short policy word, except respond.policy, which is free text.
const (
	MaxRuleWord   = 64
	MaxRulePolicy = 2000
)

var ruleWord = regexp.MustCompile(`^[a-z0-9_:-]*$`)

// Validate checks every leaf: a lowercase word (letters, digits, _ : -) of at most 64
// characters, and respond.policy free text of at most 2,000 characters.
func (r *Rules) Validate() error {
	if r == nil {
		return nil
	}
	type leaf struct{ name, value string }
	var leaves []leaf
	if r.Read != nil {
		leaves = append(leaves, leaf{"read.llm_txt", r.Read.LLMTxt}, leaf{"read.dumps", r.Read.Dumps}, leaf{"read.mailbox_meta", r.Read.MailboxMeta})
	}
	if r.Write != nil {
		leaves = append(leaves, leaf{"write.mailbox", r.Write.Mailbox}, leaf{"write.llm_txt", r.Write.LLMTxt}, leaf{"write.dumps", r.Write.Dumps})
	}
	if r.Respond != nil {
		leaves = append(leaves, leaf{"respond.mode", r.Respond.Mode})
		if len(r.Respond.Policy) > MaxRulePolicy {
			return apierr.BadRequest(apierr.CodeInvalidRequest, "rules.respond.policy is longer than %d characters", MaxRulePolicy)
		}
	}
	if r.ParticipantAdmission != nil {
		leaves = append(leaves, leaf{"participant_admission.mode", r.ParticipantAdmission.Mode})
	}
	for _, l := range leaves {
		if len(l.value) > MaxRuleWord || !ruleWord.MatchString(l.value) {
			return apierr.BadRequest(apierr.CodeInvalidRequest,
				"rules.%s must be a lowercase word of at most %d characters", l.name, MaxRuleWord)
		}
	}
	return nil
}

// DecodeRules decodes a rules object strictly (unknown sections or keys are refused) from raw
// JSON; JSON null gives nil.
func DecodeRules(raw json.RawMessage) (*Rules, error) {
	if len(raw) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, nil
	}
	var r Rules
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, apierr.BadRequest(apierr.CodeInvalidRequest,
			"rules must be an object with sections read, write, respond and participant_admission whose keys are strings")
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return &r, nil
}

// Object is identity-svc's internal view of an object, for the other services.
type Object struct {
	ObjectID      string     `json:"object_id"`
	Hash          string     `json:"hash"`
	Visibility    Visibility `json:"visibility"`
	MailboxStatus string     `json:"mailbox_status"`
	Version       int        `json:"version"`
	Title         string     `json:"title"`
	InitialLLMTxt string     `json:"initial_llm_txt"`
	Rules         *Rules     `json:"rules"`
	CreatedAt     string     `json:"created_at"`
	UpdatedAt     string     `json:"updated_at"`
}

// ProfileUpdate is what context-svc tells identity-svc after a context write, so that object
// reads show the new version at once (read-your-writes).
type ProfileUpdate struct {
	Version   int    `json:"version"`
	UpdatedAt string `json:"updated_at"`
	Title     string `json:"title"`
}

// ObjectCreatedData is the data of an object.created event.
type ObjectCreatedData struct {
	Object
}

// HashChangedData is the data of an object.hash_changed event.
type HashChangedData struct {
	Hash         string `json:"hash"`
	PreviousHash string `json:"previous_hash"`
	Username     string `json:"username"`
}

// KeyEventData is the data of key.created, key.revoked and key.rotated events: ids only, never
// a key or a digest.
type KeyEventData struct {
	KeyID    string `json:"key_id"`
	NewKeyID string `json:"new_key_id,omitempty"`
}

// ClaimVerifiedData is the data of a claim.verified event.
type ClaimVerifiedData struct {
	ClaimID       string `json:"claim_id"`
	ProofType     string `json:"proof_type"`
	ClaimedTarget string `json:"claimed_target"`
	VerifiedAt    string `json:"verified_at"`
}

// ClaimLapsedData is the data of a claim.lapsed event: a verified claim whose proof was missing
// at three checks in a row. VerifiedClaimsRemain says whether the object still holds another
// verified claim (its mailbox stays claimed) or none (it goes back to unclaimed).
type ClaimLapsedData struct {
	ClaimID              string `json:"claim_id"`
	ProofType            string `json:"proof_type"`
	ClaimedTarget        string `json:"claimed_target"`
	LapsedAt             string `json:"lapsed_at"`
	VerifiedClaimsRemain bool   `json:"verified_claims_remain"`
}
