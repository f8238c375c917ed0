// Label validation: labels become E2B metadata, which is readable by anyone with
// the API key and shows up in listings, so they must be small, printable and
// never a secret.
#include <prism_e2b/e2b_sandbox.hpp>
#include <prism_e2b/redactor.hpp>

#include "core/utf8.hpp"

namespace prism_e2b {

result<void> validate_labels(label_map const& labels)
{
    error_details const d{"labels"};
    if (labels.size() > label_caps::max_labels)
        return error(errc::invalid_argument, "too many labels (at most " + std::to_string(label_caps::max_labels) + ")",
                     d);
    auto const& redactor = secret_redactor::global();
    for (auto const& [key, value] : labels) {
        if (key.empty()) return error(errc::invalid_argument, "a label key is empty", d);
        // The key is only named in errors once it is known to be harmless.
        if (key.size() > label_caps::max_key_bytes || detail::has_control_char(key) || !detail::is_valid_utf8(key) ||
            redactor.contains_secret(key))
            return error(errc::invalid_argument,
                         "a label key is too long, has control characters, is not UTF-8 or is a secret", d);
        if (value.size() > label_caps::max_value_bytes)
            return error(errc::invalid_argument, "label '" + key + "': value is too long", d);
        if (detail::has_control_char(value))
            return error(errc::invalid_argument, "label '" + key + "': value has control characters", d);
        // Metadata travels as JSON strings: anything but UTF-8 would make the create body invalid JSON.
        if (!detail::is_valid_utf8(value))
            return error(errc::invalid_argument, "label '" + key + "': value is not UTF-8", d);
        if (redactor.is_secret(value) || redactor.contains_secret(value))
            return error(errc::invalid_argument,
                         "label '" + key + "': value is a secret; labels are stored as vendor metadata", d);
    }
    return {};
}

}  // namespace prism_e2b
