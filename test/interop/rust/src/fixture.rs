//! What the driver passes through the environment (documented in test/interop/go/fixture.go).

/// One token account the program query must return.
pub struct ExpectedAccount {
    pub address: String,
    pub lamports: u64,
    pub space: u64,
    pub mint: String,
    pub owner: String,
    pub raw: u64,
    pub decimals: u32,
    pub state: String,
}

/// The whole fixture.
pub struct Fixture {
    pub addr: String,
    pub api_key: String,
    pub localnet_url: String,
    pub landed: Vec<String>,
    pub program_id: String,
    pub program_size: u64,
    pub program_match: String,
    pub program_expect: Vec<ExpectedAccount>,
    pub draft_tx: Vec<u8>,
    pub bundle_tx: Vec<u8>,
    pub payer_seed: [u8; 32],
    pub collection: String,
    pub collection_count: u64,
    pub collection_name: String,
    pub collection_members: Vec<String>,
    pub nft_owner: String,
    pub nft_owner_ids: Vec<String>,
}

fn var(name: &str) -> Result<String, String> {
    match std::env::var(name) {
        Ok(v) if !v.is_empty() => Ok(v),
        _ => Err(format!("missing environment: {name}")),
    }
}

fn number<T: std::str::FromStr>(name: &str, text: &str) -> Result<T, String> {
    text.parse().map_err(|_| format!("{name}: {text:?} is not a number"))
}

fn hex(name: &str, text: &str) -> Result<Vec<u8>, String> {
    if text.len() % 2 != 0 {
        return Err(format!("{name}: odd hex length"));
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).map_err(|_| format!("{name}: not hex")))
        .collect()
}

impl Fixture {
    pub fn from_env() -> Result<Self, String> {
        let mut program_expect = Vec::new();
        for item in var("INTEROP_PROGRAM_EXPECT")?.split(';') {
            let f: Vec<&str> = item.split(',').collect();
            if f.len() != 8 {
                return Err(format!("INTEROP_PROGRAM_EXPECT: {item:?} has {} fields, want 8", f.len()));
            }
            let n = "INTEROP_PROGRAM_EXPECT";
            program_expect.push(ExpectedAccount {
                address: f[0].to_string(),
                lamports: number(n, f[1])?,
                space: number(n, f[2])?,
                mint: f[3].to_string(),
                owner: f[4].to_string(),
                raw: number(n, f[5])?,
                decimals: number(n, f[6])?,
                state: f[7].to_string(),
            });
        }
        let seed = hex("INTEROP_PAYER_SEED", &var("INTEROP_PAYER_SEED")?)?;
        let payer_seed: [u8; 32] = seed.try_into().map_err(|_| "INTEROP_PAYER_SEED: want 32 bytes".to_string())?;
        let collection_expect = var("INTEROP_COLLECTION_EXPECT")?;
        let parts: Vec<&str> = collection_expect.splitn(3, ';').collect();
        if parts.len() != 3 {
            return Err("INTEROP_COLLECTION_EXPECT: want `count;name;ids`".to_string());
        }
        Ok(Fixture {
            addr: var("SOLGATE_ADDR")?,
            api_key: var("SOLGATE_API_KEY")?,
            localnet_url: var("INTEROP_LOCALNET_URL")?,
            landed: std::env::var("INTEROP_LANDED").unwrap_or_default().split(',').filter(|s| !s.is_empty()).map(String::from).collect(),
            program_id: var("INTEROP_PROGRAM_ID")?,
            program_size: number("INTEROP_PROGRAM_SIZE", &var("INTEROP_PROGRAM_SIZE")?)?,
            program_match: var("INTEROP_PROGRAM_MATCH")?,
            program_expect,
            draft_tx: hex("INTEROP_DRAFT_TX", &var("INTEROP_DRAFT_TX")?)?,
            bundle_tx: hex("INTEROP_BUNDLE_TX", &var("INTEROP_BUNDLE_TX")?)?,
            payer_seed,
            collection: var("INTEROP_COLLECTION")?,
            collection_count: number("INTEROP_COLLECTION_EXPECT", parts[0])?,
            collection_name: parts[1].to_string(),
            collection_members: parts[2].split(',').map(String::from).collect(),
            nft_owner: var("INTEROP_NFT_OWNER")?,
            nft_owner_ids: var("INTEROP_NFT_OWNER_EXPECT")?.split(',').map(String::from).collect(),
        })
    }
}
