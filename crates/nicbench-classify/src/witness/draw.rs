//! Drawing one header field's value under every constraint on it.

use nicbench_rules::Field;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::Miss;

/// A field's constraints as the rules give them: (model field name, width \[bits\], field).
pub(super) type Cons = Vec<(&'static str, u32, Field<u128>)>;

/// Tries per value: a range and a mask on the same bits may need a few draws to agree.
const TRIES: usize = 32;

fn ones(width_bits: u32) -> u128 {
    if width_bits >= 128 {
        u128::MAX
    } else {
        (1u128 << width_bits) - 1
    }
}

/// A value of field `name` that every constraint on it in `cons` accepts: the exact bits the
/// masks fix, random elsewhere (a point of each range), or `default` when nothing constrains
/// it. `label` names the field in the error ("ipv4.src").
pub(super) fn value(
    cons: &Cons,
    name: &str,
    label: &str,
    rng: &mut ChaCha8Rng,
    default: impl FnOnce(&mut ChaCha8Rng) -> u128,
) -> Result<u128, Miss> {
    let fields: Vec<(u32, Field<u128>)> = cons
        .iter()
        .filter(|(n, _, _)| *n == name)
        .map(|(_, w, f)| (*w, *f))
        .collect();
    let Some(&(width, _)) = fields.first() else {
        return Ok(default(rng));
    };
    let conflict = || Miss::Conflict {
        what: format!("{label}: no value meets every match on it"),
    };
    let (mut fixed_mask, mut fixed_value) = (0u128, 0u128);
    for (_, f) in fields.iter().filter(|(_, f)| f.last.is_none()) {
        if (fixed_value ^ f.value) & fixed_mask & f.mask != 0 {
            return Err(conflict());
        }
        fixed_mask |= f.mask;
        fixed_value |= f.value & f.mask;
    }
    let full = ones(width);
    for _ in 0..TRIES {
        let mut v = fixed_value | (rng.random::<u128>() & full & !fixed_mask);
        for (_, f) in &fields {
            if let Some(last) = f.last {
                let t = f.value + rng.random_range(0..=last.saturating_sub(f.value));
                v = ((v & !f.mask) | (t & f.mask)) & !fixed_mask | fixed_value;
            }
        }
        if fields.iter().all(|(_, f)| f.matches(v)) {
            return Ok(v);
        }
    }
    Err(conflict())
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    fn field(value: u128, mask: u128, last: Option<u128>) -> Field<u128> {
        Field { value, mask, last }
    }

    #[test]
    fn test_a_value_meets_masks_and_ranges_or_the_conflict_is_named() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let none: Cons = vec![];
        assert_eq!(value(&none, "src", "udp.src", &mut rng, |_| 7).ok(), Some(7));
        // 10.1.0.0/16 and 10.1.2.0/24 together: the /24.
        let prefixes: Cons = vec![
            ("src", 32, field(0x0a01_0000, 0xffff_0000, None)),
            ("src", 32, field(0x0a01_0200, 0xffff_ff00, None)),
        ];
        for _ in 0..50 {
            let v = value(&prefixes, "src", "ipv4.src", &mut rng, |_| 0).unwrap_or(0);
            assert_eq!(v >> 8, 0x0a0102, "{v:#x}");
        }
        // A port range and an even-port mask.
        let range: Cons = vec![
            ("dst", 16, field(1000, 0xffff, Some(1010))),
            ("dst", 16, field(0, 1, None)),
        ];
        for _ in 0..50 {
            let v = value(&range, "dst", "tcp.dst", &mut rng, |_| 0).unwrap_or(1);
            assert!((1000..=1010).contains(&v) && v % 2 == 0, "{v}");
        }
        let clash: Cons = vec![
            ("dst", 16, field(80, 0xffff, None)),
            ("dst", 16, field(443, 0xffff, None)),
        ];
        assert!(matches!(
            value(&clash, "dst", "tcp.dst", &mut rng, |_| 0),
            Err(Miss::Conflict { .. })
        ));
        let outside: Cons = vec![
            ("dst", 16, field(80, 0xffff, None)),
            ("dst", 16, field(1000, 0xffff, Some(2000))),
        ];
        assert!(value(&outside, "dst", "tcp.dst", &mut rng, |_| 0).is_err());
    }
}
