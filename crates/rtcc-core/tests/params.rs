//! Every parameter is declared once: the default a listing shows is the one
//! parsing applies. Writing each listed default back as a scenario would gives
//! the same configuration as leaving it out.

use rtcc_core::controller::copa::CopaConfig;
use rtcc_core::controller::dumbo::DumboConfig;
use rtcc_core::controller::gcc::GccConfig;
use rtcc_core::controller::rocc::RoccConfig;
use rtcc_core::controller::vivace::VivaceConfig;
use rtcc_core::controller::{self, ControllerContext, ParamInfo, ParamValue, Params};
use rtcc_core::encoder::{EncoderConfig, KINDS};
use rtcc_core::fec::FecConfig;
use rtcc_core::quality::{self, QualityModel};

/// Each listed default as text, the way a scenario writes it; a default
/// that depends on a case ("48.5 (game: 45)") is written as its main value.
fn listed_defaults(list: &[ParamInfo]) -> Params {
    list.iter().fold(Params::new(), |p, i| {
        let text = i.default_text();
        let main = text.split(" (").next().unwrap_or_default().to_string();
        let v = match main.as_str() {
            "true" => ParamValue::Bool(true),
            "false" => ParamValue::Bool(false),
            _ => ParamValue::Str(main),
        };
        p.with(i.name, v)
    })
}

#[test]
fn listed_defaults_are_the_parsed_defaults() {
    let ctx = ControllerContext::default();
    let none = Params::new();
    let all = |name: &str| listed_defaults(&controller::params_of(name).unwrap());
    assert_eq!(GccConfig::from_params(&all("gcc"), &ctx), GccConfig::from_params(&none, &ctx));
    assert_eq!(CopaConfig::from_params(&all("copa")).unwrap(), CopaConfig::default());
    assert_eq!(RoccConfig::from_params(&all("rocc")).unwrap(), RoccConfig::default());
    assert_eq!(VivaceConfig::from_params(&all("vivace"), &ctx), VivaceConfig::from_params(&none, &ctx));
    assert_eq!(DumboConfig::from_params(&all("rocc+dumbo")).unwrap(), DumboConfig::default());
    for kind in KINDS {
        let listed = listed_defaults(EncoderConfig::param_info(kind));
        let listed = Params(listed.0.into_iter().filter(|(k, _)| k != "profile").collect());
        assert_eq!(EncoderConfig::from_params(kind, &listed), EncoderConfig::from_params(kind, &none), "{kind}");
    }
    assert_eq!(FecConfig::from_params(&listed_defaults(FecConfig::PARAMS)).unwrap(), FecConfig::default());
    assert_eq!(QualityModel::from_params(&listed_defaults(quality::PARAMS)).unwrap(), QualityModel::default());
    // Every registered name builds from its declared defaults alone.
    for name in controller::listed_names() {
        assert!(controller::create(&name, &all(&name), &ctx).is_ok(), "{name}");
    }
}

#[test]
fn every_parameter_lists_kind_range_and_doc() {
    let mut lists: Vec<Vec<ParamInfo>> =
        controller::listed_names().iter().map(|n| controller::params_of(n).unwrap()).collect();
    lists.extend(KINDS.iter().map(|k| EncoderConfig::param_info(k).to_vec()));
    lists.push(FecConfig::PARAMS.to_vec());
    lists.push(quality::PARAMS.to_vec());
    for p in lists.iter().flatten() {
        assert!(!p.doc.is_empty() && !p.default_text().is_empty(), "{}", p.name);
        let text_kind = matches!(p.kind, controller::Kind::Text);
        assert_eq!(p.range_text().is_none(), text_kind, "{}: {:?}", p.name, p.range_text());
    }
}
